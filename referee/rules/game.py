"""The Durak state machine: deal, bouts, drawing, going out, the end of the game.

How a game runs (docs/RULES.md states the same rules for people):

- ``Game.new`` deals from an explicit deck order (or one shuffled from a seed), turns
  the trump and chooses the first attacker. If ``trump_exchange`` allows the seat
  holding the deck's lowest trump, the game opens in phase EXCHANGE for that seat.
- A bout is three phases. ATTACK: the main attacker leads one card. DEFEND: the
  defender covers one uncovered card, transfers, shows a trump, or takes. THROW_IN:
  once every attack card is covered (or the defender takes), the attackers are asked
  in ``order`` (main attacker first, then in the direction of play, never the defender;
  play is clockwise until a ``transfer=reflect`` reflection reverses it, and
  ``throw_in_order=counter_clockwise`` asks against it); each throws
  in one card or passes. A new card sends the play back to the defender (unless they
  are taking) and restarts the asking at the main attacker. The bout ends when every
  attacker has passed in a row, or when no attacker can legally add a card.
  Options change this flow: ``lead=same_rank`` keeps the main attacker in ATTACK to lay
  more cards of the lead's rank (PASS ends the lead); ``throw_in_timing=any`` asks the
  attackers after every card laid, and hands the move to the defender when they all pass
  with cards still uncovered.
- At the end of a bout the table is discarded or picked up, everyone draws up to six
  (main attacker, other attackers, defender last), empty hands with an empty talon go
  out, and the next bout's roles are set. The game ends when at most one player holds
  cards, or by the stalemate guard or the action cap.

Every rule lives in this file; the per-seat view is ``observe``. Actions are ints
(see ``actions``); card sets are bitmasks (see ``cards``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Final

from .actions import (
    ATTACK,
    COVER,
    EXCHANGE,
    KIND_NAMES,
    PASS,
    SHOW_TRUMP,
    TAKE,
    THROW_IN,
    TRANSFER,
    IllegalAction,
    action_str,
    card_of,
    check_action,
    kind_of,
    slot_of,
)
from .cards import (
    BEATERS,
    CARD_TEXT,
    DECK_LOW_RANK,
    RANK_MASK,
    card_str,
    deck_cards,
    iter_bits,
    make_card,
    mask_str,
    rank_of,
    suit_of,
)
from .options import Rules, RulesError, seat_count_error

HAND_SIZE: Final = 6

# The phases (Final: compiled, each use is a constant; see actions.ATTACK).
EXCHANGE_PHASE: Final = 0
ATTACK_PHASE: Final = 1
DEFEND_PHASE: Final = 2
THROW_IN_PHASE: Final = 3
OVER: Final = 4
PHASE_NAMES: Final = ("exchange", "attack", "defend", "throw_in", "over")

#: Terminations decided by the rules (a referee adds forfeit kinds on top of these).
NORMAL, DRAW, STALEMATE, ACTION_CAP = "normal", "draw", "stalemate", "action_cap"


@dataclass(frozen=True)
class Outcome:
    """How a game ended. ``durak`` is the losing seat, or None for a draw.

    ``last_out`` lists the seats that went out in the final bout when it left nobody
    holding cards (the players a ``last_two_out`` draw is shared between; with
    ``defender_loses`` the durak is among them); empty for every other ending.
    """

    termination: str
    durak: int | None
    last_out: tuple[int, ...] = ()
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"termination": self.termination, "durak": self.durak,
                "last_out": list(self.last_out), "reason": self.reason}


class PositionError(RulesError):
    """A position given to ``Game.from_position`` that no game could reach or continue
    from; the message names what is wrong. The caller's fault, never a bot's."""

    hint = "fix what the message names in the position (hands, table, talon, turn)"


def _check_seats(n: int, out: tuple[int, ...], attacker: int, dealer: int | None) -> None:
    """PositionError unless a position's seats can be: MIN_SEATS to MAX_SEATS players, the
    out seats, the attacker (still in) and the dealer at the table, at least two seats still in."""
    problem = seat_count_error(n)
    if problem:
        raise PositionError(problem)
    for s in out:
        if not 0 <= s < n:
            raise PositionError(f"out seat {s} does not exist at a {n}-player table (seats 0..{n - 1})")
    if not 0 <= attacker < n:
        raise PositionError(f"attacker seat {attacker} does not exist at a {n}-player table "
                            f"(seats 0..{n - 1})")
    if attacker in out:
        raise PositionError(f"the attacker, seat {attacker}, is out; the main attacker must be "
                            "a seat still in the game")
    if n - len(set(out)) < 2:
        raise PositionError("fewer than two seats are still in: the game would already be over")
    if dealer is not None and not 0 <= dealer < n:
        raise PositionError(f"dealer seat {dealer} does not exist at a {n}-player table")


def shuffled_deck(size: int, seed: int | str) -> list[int]:
    """The deck order for ``seed``: deterministic across runs and Python versions >= 3.2."""
    deck = deck_cards(size)
    random.Random(seed).shuffle(deck)
    return deck


#: Every attribute of a Game: its ``__slots__``, and what ``copy`` copies. (A module
#: constant: compiled with mypyc, the class has no ``__slots__`` attribute to read.)
STATE_FIELDS = (
    "rules", "players", "deck", "dealer", "hands", "talon", "trump_card", "trump_suit",
    "trump_holder", "discard", "attacks", "covers", "known", "out", "attacker",
    "defender", "order", "phase", "taking", "asker", "passes", "bout", "transfers",
    "shown", "limit", "first_bout", "exchange_seat", "action_count", "pickup_streak", "direction",
    "outcome", "history", "events", "out_order", "_legal_at", "_legal",
    "_any_timing", "_action_cap", "_bout_cap", "_first_cap", "_all_ranks", "_transfers",
    "_throw_ranks", "_ask_backwards", "_draw_backwards",
)


def _whole_deck(deck: list[int], size: int) -> bool:
    """Whether ``deck`` holds each card of the deck of ``size`` cards exactly once (any
    order): ``sorted(deck) == deck_cards(size)``, without sorting (checked for every deal)."""
    if len(deck) != size:
        return False
    low = DECK_LOW_RANK.get(size, -1) * 4
    if low < 0:
        return False
    seen = 0
    for card in deck:
        if not low <= card < 52 or seen >> card & 1:
            return False
        seen |= 1 << card
    return True


class Game:
    """One game of Durak. Mutable; ``copy()`` for a snapshot.

    The deck order ``deck`` lists the cards in the order they leave the deck: dealt one
    at a time starting at the dealer's next seat, then the face-up trump (which is
    drawn last), then the talon from the top.
    """

    __slots__ = STATE_FIELDS

    rules: Rules
    players: int                    #: seats at the table
    deck: list[int]                 #: the deck order this game was dealt from
    dealer: int
    hands: list[int]                #: card bitmask per seat
    talon: list[int]                #: popped from the end; index 0 is the face-up trump
    trump_card: int                 #: the face-up trump (after an exchange: the low trump)
    trump_suit: int
    trump_holder: int | None        #: who drew (or was dealt) the face-up trump
    discard: int                    #: bitmask
    attacks: list[int]              #: attack cards by table slot
    covers: list[int]               #: cover card by slot, -1 while uncovered
    known: list[int]                #: per seat, cards publicly known to be in that hand
    out: list[bool]
    attacker: int                   #: the main attacker of the bout
    defender: int
    order: list[int]                #: attackers in asking order, main attacker first
    phase: int
    taking: bool                    #: the defender has said take
    asker: int                      #: index into ``order`` during THROW_IN
    passes: int                     #: attackers who passed in a row since the last card
    bout: int
    transfers: int                  #: transfers (and shown trumps) in this bout
    shown: int                      #: bitmask of trumps shown in this bout
    limit: int                      #: the most attack cards this bout may hold
    first_bout: bool
    exchange_seat: int | None
    action_count: int
    pickup_streak: int              #: takes in a row with an empty talon, nobody out
    direction: int                  #: +1 play goes clockwise, -1 counter-clockwise (reflections)
    outcome: Outcome | None
    history: list[int]              #: every action applied, in order
    events: list[tuple[Any, ...]] | None
    out_order: list[int]
    #: The last ``legal_actions()`` result and the ``action_count`` it was computed at:
    #: ``apply`` checks an action by membership in it instead of computing it again.
    _legal_at: int
    _legal: tuple[int, ...]
    #: Rules read on every action, looked up once per game: throw_in_timing == "any",
    #: action_cap, the most attack cards of a bout (``_cap``) in the first bout and after,
    #: throw_in_ranks == "all", transfer != "off".
    _any_timing: bool
    _action_cap: int
    _bout_cap: int
    _first_cap: int
    _all_ranks: bool
    _transfers: bool
    #: In phase THROW_IN: ``_rank_mask()``, taken when the phase was entered (the table
    #: gains no card until the phase is entered again or left).
    _throw_ranks: int
    #: throw_in_order == "counter_clockwise": ``order`` runs backwards from the main
    #: attacker; and whether the other attackers draw in the reverse of ``order`` (the
    #: draw direction, draw_others, differs from the asking direction).
    _ask_backwards: bool
    _draw_backwards: bool

    # ------------------------------------------------------------------ creation

    def __init__(self) -> None:
        """An empty game for ``new``, ``from_position`` and ``copy`` to fill in; make
        games with those. (A plain constructor, not ``__new__``: mypyc compiles this class.)"""

    @classmethod
    def new(cls, rules: Rules, players: int, *, seed: int | str | None = None,
            deck: list[int] | None = None, dealer: int | None = None,
            record_events: bool = False) -> Game:
        """Deal a new game.

        Give exactly one of ``seed`` (deck shuffled from it) or ``deck`` (an explicit
        order of every card of the rules' deck). ``dealer`` defaults to seat
        ``players - 1`` (game 1 of a match). With ``record_events`` the game keeps a
        list of public events in ``events`` for a referee to forward.
        Raises RulesError for an impossible table or a bad deck.
        """
        rules.check_table(players)
        if (seed is None) == (deck is None):
            raise ValueError("give exactly one of seed or deck")
        if deck is None:
            deck = shuffled_deck(rules.deck, seed)  # type: ignore[arg-type]
        elif not _whole_deck(deck, rules.deck):
            raise RulesError(f"the deck order must hold each of the {rules.deck} cards exactly once")
        if dealer is None:
            dealer = players - 1
        if not 0 <= dealer < players:
            raise RulesError(f"dealer seat {dealer} does not exist at a {players}-player table")
        g = cls()
        g.rules, g.players, g.deck, g.dealer = rules, players, list(deck), dealer
        g.events = [] if record_events else None
        g.history = []
        dealt = players * HAND_SIZE
        # One card at a time from the dealer's left: seat s gets cards s', s' + players, ...
        # (s' its place after the dealer), each mask built in a local (an unboxed int).
        hands = [0] * players
        for seat in range(players):
            mask = 0
            for i in range((seat - dealer - 1) % players, dealt, players):
                mask |= 1 << deck[i]
            hands[seat] = mask
        g.hands = hands
        g.known = [0] * players
        g.out = [False] * players
        g.out_order = []
        if dealt < len(deck):
            g.trump_card = deck[dealt]
            g.trump_holder = None
            # The talon is popped from the end: the face-up trump sits at index 0.
            g.talon = [deck[dealt]] + deck[:dealt:-1]
        else:
            # Whole deck dealt: the last card dealt (the dealer's) is shown and sets trump.
            g.trump_card = deck[-1]
            g.trump_holder = dealer
            g.known[dealer] |= 1 << g.trump_card
            g.talon = []
        g.trump_suit = suit_of(g.trump_card)
        g.discard = 0
        g.attacks, g.covers = [], []
        g._fresh_counters(bout=0, first_bout=True, taking=False)
        g.phase = ATTACK_PHASE
        g._start_bout(g._first_attacker())
        # Trump exchange is offered after the opener is fixed: it cannot change who opens.
        # Only for a face-up card above the exchanged one (a swap down is no offer).
        if rules.trump_exchange and g.talon:
            low = make_card(rules.exchange_rank_index(), g.trump_suit)
            if low < g.trump_card:
                for seat in range(players):
                    if hands[seat] >> low & 1 and rules.may_exchange(seat):
                        g.exchange_seat = seat
                        g.phase = EXCHANGE_PHASE
        return g

    @classmethod
    def from_position(cls, rules: Rules, hands: list[str], *, trump: str, talon: str = "",
                      attacker: int = 0, table: str = "", taking: bool = False,
                      out: tuple[int, ...] = (), first_bout: bool = False,
                      dealer: int | None = None, record_events: bool = False,
                      counter_clockwise: bool = False) -> Game:
        """Set up an explicit position (for tests, puzzles and analysis).

        ``hands``: one string of cards per seat, e.g. ``["6S 7H", "8S"]``. ``trump``:
        the trump card; unless it is in a hand it lies face up under the talon and is
        drawn last. ``talon``: the talon from the top, without the face-up trump.
        ``table``: attack/cover pairs, e.g. ``"6S/7S 6H/--"``. Every other card of the
        rules' deck is in the discard pile. The bout's phase follows from the table:
        empty, ATTACK; an uncovered card and not taking, DEFEND; else THROW_IN from the
        main attacker. The defender is the next seat in after ``attacker``; the bout's
        attack limit counts the defender's hand plus the cards they laid on the table.
        ``counter_clockwise``: play goes counter-clockwise (after a reflection).
        Raises PositionError naming what is wrong with an impossible position.
        """
        from .cards import parse_card
        n = len(hands)
        _check_seats(n, out, attacker, dealer)
        g = cls()
        g.rules, g.players, g.deck = rules, n, []
        g.dealer = n - 1 if dealer is None else dealer
        g.events = [] if record_events else None
        g.history = []
        g.hands = [0] * n
        placed = 0
        for s, text in enumerate(hands):
            for c in map(parse_card, text.split()):
                if g.hands[s] >> c & 1:
                    raise PositionError(f"{card_str(c)} is placed twice in the position")
                g.hands[s] |= 1 << c
        g.trump_card = parse_card(trump)
        g.trump_suit = suit_of(g.trump_card)
        g.known = [0] * n
        g.trump_holder = None
        top = [parse_card(c) for c in talon.split()]
        g.attacks, g.covers = [], []
        for pair in table.split():
            attack_text, _, cover_text = pair.partition("/")
            g.attacks.append(parse_card(attack_text))
            g.covers.append(-1 if cover_text in ("", "--") else parse_card(cover_text))
        if top and top[-1] != g.trump_card:
            raise PositionError("the talon's last card (drawn last) must be the face-up trump")
        g.talon = top[::-1]
        for c in [c for h in g.hands for c in iter_bits(h)] + top + g.attacks + g.covers:
            if c >= 0:
                if placed >> c & 1:
                    raise PositionError(f"{card_str(c)} is placed twice in the position")
                placed |= 1 << c
        every = 0
        for c in deck_cards(rules.deck):
            every |= 1 << c
        if placed & ~every:
            raise PositionError(f"the position uses cards outside the {rules.deck}-card deck")
        g.discard = every & ~placed
        g.out = [s in out for s in range(n)]
        g.out_order = list(out)
        g._fresh_counters(bout=1, first_bout=first_bout, taking=taking)
        if counter_clockwise:
            g.direction = -1
        g._set_roles(attacker)
        covered = sum(1 for c in g.covers if c >= 0)
        g.limit = min(g._cap(), g.hands[g.defender].bit_count() + covered)
        if not g.attacks:
            g.phase = ATTACK_PHASE
        elif -1 in g.covers and not taking:
            g.phase = DEFEND_PHASE
        else:
            g.phase = THROW_IN_PHASE
            g._throw_ranks = g._rank_mask()
        g._check_position()
        return g

    def _check_position(self) -> None:
        """Raise PositionError if this hand-made position could not arise in a game: a
        seat marked out holds cards, a seat without cards is still in outside a bout, the
        table breaks the bout's limit or holds a cover that does not beat its card, or the
        seat to move has no legal action."""
        n, hands, out = self.players, self.hands, self.out
        for s in range(n):
            if out[s] and hands[s]:
                raise PositionError(f"seat {s} is marked out but holds {' '.join(mask_str(hands[s]))}")
        if self.taking and not self.attacks:
            raise PositionError("the defender is taking, but the table is empty")
        if not self.attacks:
            for s in range(n):
                if not out[s] and not hands[s] and not self.talon:
                    raise PositionError(f"seat {s} holds no cards with the talon empty and no bout "
                                        "in play, so it has gone out: list it in out")
        if len(self.attacks) > self.limit:
            raise PositionError(
                f"the table holds {len(self.attacks)} attack cards, over this bout's limit of "
                f"{self.limit} (max_attacks, first-bout limit, or the defender's hand plus the "
                "cards they covered with)")
        beaters = BEATERS[self.trump_suit]
        for slot, (a, c) in enumerate(zip(self.attacks, self.covers, strict=True)):
            if c >= 0 and not beaters[a] >> c & 1:
                raise PositionError(f"table slot {slot}: {card_str(c)} does not beat {card_str(a)} "
                                    f"(trump {'CDHS'[self.trump_suit]})")
        if not self._legal_actions():
            raise PositionError(f"seat {self.seat_to_move()} is to move in phase "
                                f"{PHASE_NAMES[self.phase]} but has no legal action (a main attacker "
                                "needs a card to lead)")

    def _fresh_counters(self, *, bout: int, first_bout: bool, taking: bool) -> None:
        """The bookkeeping of a game that has just been set up: no actions yet (and the
        rules read on every action, looked up once)."""
        self.taking = taking
        self.asker = self.passes = self.transfers = self.shown = 0
        self.direction = 1
        self.bout = bout
        self.first_bout = first_bout
        self.action_count = 0
        self.pickup_streak = 0
        self.outcome = None
        self.exchange_seat = None
        self._legal_at, self._legal = -1, ()
        rules = self.rules
        self._any_timing = rules.throw_in_timing == "any"
        self._action_cap = rules.action_cap
        self._bout_cap = rules.max_attacks or 64
        self._first_cap = min(self._bout_cap, 5) if rules.first_bout_limit else self._bout_cap
        self._all_ranks = rules.throw_in_ranks == "all"
        self._transfers = rules.transfer != "off"
        self._throw_ranks = 0
        self._ask_backwards = rules.throw_in_order == "counter_clockwise"
        self._draw_backwards = (rules.draw_others == "counter_clockwise") != self._ask_backwards

    def _first_attacker(self) -> int:
        fa = self.rules.first_attacker
        if fa.startswith("seat:"):
            return int(fa[5:])
        nxt = (self.dealer + 1) % self.players
        if fa == "dealer_next":
            return nxt
        if fa == "two_of_clubs":
            # Cards 0..3 are 2C 2D 2H 2S (card index = rank * 4 + suit): the order of asking.
            for card in range(4):
                for seat, hand in enumerate(self.hands):
                    if hand >> card & 1:
                        return seat
            return nxt
        best, best_rank = nxt, 99
        for seat, hand in enumerate(self.hands):
            trumps = hand >> self.trump_suit & 0x1111111111111  # one bit per rank
            if trumps:
                r = ((trumps & -trumps).bit_length() - 1) >> 2
                if r < best_rank:
                    best, best_rank = seat, r
        return best

    def copy(self) -> Game:
        """An independent copy (lists copied; ints and the rules are immutable)."""
        g = Game()
        for name in STATE_FIELDS:
            v = getattr(self, name)
            setattr(g, name, v.copy() if isinstance(v, list) else v)
        return g

    # ------------------------------------------------------------------ queries

    @property
    def current_seat(self) -> int | None:
        """The seat whose decision it is, or None once the game is over."""
        return None if self.phase == OVER else self.seat_to_move()

    def seat_to_move(self) -> int:
        """The seat whose decision it is; the game must not be over."""
        p = self.phase
        if p == DEFEND_PHASE:
            return self.defender
        if p == THROW_IN_PHASE:
            return self.order[self.asker]
        if p == ATTACK_PHASE:
            return self.attacker
        if p == EXCHANGE_PHASE and self.exchange_seat is not None:
            return self.exchange_seat
        raise AssertionError("no seat is to move: the game is over")

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def next_in(self, seat: int) -> int:
        """The next seat after ``seat`` in the direction of play (clockwise unless a
        reflection reversed it) that is still in the game."""
        n, out, d = self.players, self.out, self.direction
        s = (seat + d) % n
        while out[s]:
            s = (s + d) % n
        return s

    def table_mask(self) -> int:
        m = 0
        for c in self.attacks:
            m |= 1 << c
        for c in self.covers:
            if c >= 0:
                m |= 1 << c
        return m

    def _rank_mask(self) -> int:
        """Cards whose rank may be thrown in (``throw_in_ranks``)."""
        m = 0
        for c in self.attacks:
            m |= RANK_MASK[c >> 2]
        if self._all_ranks:
            for c in self.covers:
                if c >= 0:
                    m |= RANK_MASK[c >> 2]
        return m

    def _cap(self) -> int:
        """The most attack cards this bout may hold, ignoring the defender's hand."""
        return self._first_cap if self.first_bout else self._bout_cap

    def legal_actions(self) -> list[int]:
        """Every legal action of the current seat (empty once the game is over), in a
        fixed order (the protocol's legal list keeps it). The list is the caller's."""
        acts = self._legal_actions()
        # apply() checks an answer by membership in this snapshot of it.
        self._legal_at, self._legal = self.action_count, tuple(acts)
        return acts

    def _legal_actions(self) -> list[int]:
        """legal_actions() without remembering it (for queries that change nothing)."""
        p = self.phase
        if p == DEFEND_PHASE:
            hand = self.hands[self.defender]
            beaters = BEATERS[self.trump_suit]
            acts = []
            covers = self.covers
            any_cover = False
            for slot, a in enumerate(self.attacks):
                if covers[slot] < 0:
                    m = hand & beaters[a]
                    while m:
                        low = m & -m
                        acts.append(COVER | (low.bit_length() - 1) << 4 | slot << 10)
                        m ^= low
                else:
                    any_cover = True
            if self._transfers and not any_cover:
                acts.extend(self._transfer_actions(hand))
            acts.append(TAKE)
        elif p == THROW_IN_PHASE:
            seat = self.order[self.asker]
            acts = []
            if len(self.attacks) < self.limit:
                m = self.hands[seat] & self._throw_ranks
                while m:
                    low = m & -m
                    acts.append(THROW_IN | (low.bit_length() - 1) << 4)
                    m ^= low
            acts.append(PASS)
        elif p == ATTACK_PHASE:
            acts = []
            m = self.hands[self.attacker]
            if self.attacks:  # lead=same_rank: more of the lead's rank, or pass to end the lead
                m &= RANK_MASK[self.attacks[0] >> 2]
            while m:
                low = m & -m
                acts.append(ATTACK | (low.bit_length() - 1) << 4)
                m ^= low
            if self.attacks:
                acts.append(PASS)
        elif p == EXCHANGE_PHASE:
            acts = [EXCHANGE, PASS]
        else:
            acts = []
        return acts

    def _transfer_actions(self, hand: int) -> list[int]:
        rules = self.rules
        if rules.transfer_limit is not None and self.transfers >= rules.transfer_limit:
            return []
        attacks = self.attacks
        rank = attacks[0] >> 2
        for c in attacks:
            if c >> 2 != rank:
                return []
        # A reflection sends the bout back to the main attacker; a transfer to the next seat.
        target = self.hands[self.attacker if rules.transfer == "reflect"
                            else self.next_in(self.defender)].bit_count()
        n = len(attacks)
        acts = []
        if n + 1 <= self._cap() and target >= n + 1:
            m = hand & RANK_MASK[rank]
            while m:
                low = m & -m
                acts.append(TRANSFER | (low.bit_length() - 1) << 4)
                m ^= low
        # Deflection (one transfer per bout) never passes onto a player holding one card,
        # also not by a shown trump, which adds no card (a transfer needs two anyway).
        if rules.transfer == "trump_show" and target >= n and (target > 1 or rules.transfer_limit != 1):
            trump = make_card(rank, self.trump_suit)
            if hand >> trump & 1 and not self.shown >> trump & 1:
                acts.append(SHOW_TRUMP | trump << 4)
        return acts

    def forced_action(self, legal: list[int] | None = None) -> int | None:
        """The action the referee applies without asking, or None if the seat decides.

        A seat is not asked when its only legal action is pass or take and the rules
        say ``ask_forced`` off (on, the default, every decision is asked: how fast the
        referee moves on must not tell the other seats that the seat had no choice).
        (An exchange offer is always asked.) Pass ``legal``
        when the caller already has ``legal_actions()``, to save computing it again.
        """
        if legal is not None and len(legal) > 1:
            return None  # a choice (the usual case: decided before reading the rules)
        if self.rules.ask_forced or self.phase in (OVER, EXCHANGE_PHASE, ATTACK_PHASE):
            return None
        acts = self.legal_actions() if legal is None else legal
        if len(acts) == 1 and acts[0] in (PASS, TAKE):
            return acts[0]
        return None

    def illegal_reason(self, action: int) -> str | None:
        """Why ``action`` is not legal now, or None if it is. ``action`` must be well-formed."""
        if self.phase == OVER:
            return "the game is over"
        if action in self._legal_actions():
            return None
        seat = self.seat_to_move()
        kind = kind_of(action)
        name = KIND_NAMES[kind]
        phase = PHASE_NAMES[self.phase]
        allowed = {EXCHANGE_PHASE: (EXCHANGE, PASS), ATTACK_PHASE: (ATTACK,),
                   DEFEND_PHASE: (COVER, TRANSFER, SHOW_TRUMP, TAKE),
                   THROW_IN_PHASE: (THROW_IN, PASS)}[self.phase]
        if self.phase == ATTACK_PHASE and self.attacks:
            allowed = (ATTACK, PASS)
        if kind not in allowed:
            # The kinds of the legal list the seat was offered, in its order: never a kind
            # the rules switch off or the position makes impossible (the phase allows more).
            offered = dict.fromkeys(kind_of(a) for a in self._legal_actions())
            names = ", ".join(KIND_NAMES[k] for k in offered)
            return f"{name} is not an option in phase {phase} (seat {seat} may: {names})"
        card = card_of(action)
        if kind in (ATTACK, COVER, THROW_IN, TRANSFER, SHOW_TRUMP) and not self.hands[seat] >> card & 1:
            return f"seat {seat} does not hold {card_str(card)}"
        if kind == ATTACK and self.attacks:
            return (f"a lead of several cards is of one rank: {card_str(card)} is not of rank "
                    f"{card_str(self.attacks[0])[0]}")
        if kind == COVER:
            slot = slot_of(action)
            if slot >= len(self.attacks):
                return f"there is no table slot {slot} (slots 0..{len(self.attacks) - 1})"
            if self.covers[slot] >= 0:
                return f"slot {slot} ({card_str(self.attacks[slot])}) is already covered"
            return f"{card_str(card)} does not beat {card_str(self.attacks[slot])} (trump {'CDHS'[self.trump_suit]})"
        if kind == THROW_IN:
            if len(self.attacks) >= self.limit:
                return f"the bout already holds its limit of {self.limit} attack cards"
            return f"no card of rank {card_str(card)[0]} lies on the table"
        if kind in (TRANSFER, SHOW_TRUMP):
            if self.rules.transfer == "off" or (kind == SHOW_TRUMP and self.rules.transfer != "trump_show"):
                return f"{name} is not allowed by these rules (transfer={self.rules.transfer})"
            if any(c >= 0 for c in self.covers):
                return "a card on the table is already covered"
            if any(rank_of(c) != rank_of(self.attacks[0]) for c in self.attacks):
                return "the attack cards are not all of one rank"
            if rank_of(card) != rank_of(self.attacks[0]):
                return f"{card_str(card)} is not of the attacked rank"
            if kind == SHOW_TRUMP and suit_of(card) != self.trump_suit:
                return f"{card_str(card)} is not a trump"
            if kind == SHOW_TRUMP and self.shown >> card & 1:
                return f"{card_str(card)} was already shown in this bout"
            lim = self.rules.transfer_limit
            if lim is not None and self.transfers >= lim:
                return f"this bout has used its {lim} transfer(s)"
            if lim == 1 and kind == SHOW_TRUMP and self.hands[self.next_in(self.defender)].bit_count() == 1:
                return "with transfer_limit=1 (deflection) a bout is never passed onto a player with one card"
            return "the next defender holds too few cards, or the attack limit would be exceeded"
        return f"{action_str(action)} is not legal now"

    # ------------------------------------------------------------------ apply

    def apply(self, action: object) -> None:
        """Apply the current seat's action (anything: this is where a bot's answer is checked).

        Raises MalformedAction for a bad encoding and IllegalAction (saying why) for a
        well-formed action that is not legal now; in both cases nothing changes.
        After ``legal_actions()`` in the same position this is a membership test in the
        list it returned (every action applies through ``apply_legal``, which moves
        ``action_count`` on), so checking costs almost nothing over ``apply_legal``.
        """
        if self._legal_at == self.action_count and type(action) is int and action in self._legal:
            self.apply_legal(action)
            return
        checked = check_action(action)
        reason = self.illegal_reason(checked)
        if reason is not None:
            raise IllegalAction(f"{action_str(checked)}: {reason}")
        self.apply_legal(checked)

    def apply_legal(self, action: int) -> None:
        """Apply an action known to be in ``legal_actions()``. Unchecked: the fast path."""
        p = self.phase  # the seat to move (seat_to_move, inlined: this runs for every action)
        seat = (self.defender if p == DEFEND_PHASE else self.order[self.asker] if p == THROW_IN_PHASE
                else self.attacker if p == ATTACK_PHASE else self.exchange_seat)
        assert seat is not None and p != OVER, "no seat is to move: the game is over"
        self.history.append(action)
        ev = self.events
        kind = action & 15
        if ev is not None:
            name = "decline" if self.phase == EXCHANGE_PHASE and kind == PASS else KIND_NAMES[kind]
            ev.append((name, seat, action))
        card = action >> 4 & 63
        bit = 1 << card
        if kind == COVER:
            self.hands[seat] ^= bit
            self.known[seat] &= ~bit
            self.covers[action >> 10] = card
            if -1 not in self.covers or self._any_timing:
                self._enter_throw_in()
        elif kind == THROW_IN:
            self._lay(seat, card)
            if self.taking or self._any_timing:
                self._enter_throw_in()
            else:
                self.phase = DEFEND_PHASE
        elif kind == PASS:
            if self.phase == EXCHANGE_PHASE:
                self.phase = ATTACK_PHASE
            elif self.phase == ATTACK_PHASE:  # lead=same_rank: the lead is complete
                self._lead_done()
            else:
                self.passes += 1
                if self.passes >= len(self.order):
                    self._asking_done()
                else:
                    self.asker = (self.asker + 1) % len(self.order)
        elif kind == ATTACK:
            self._lay(seat, card)
            if not (self.rules.lead == "same_rank" and len(self.attacks) < self.limit
                    and self.hands[seat] & RANK_MASK[card >> 2]):
                self._lead_done()
        elif kind == TAKE:
            self.taking = True
            self._enter_throw_in()
        elif kind == TRANSFER:
            self._lay(seat, card)
            if self.rules.transfer == "reflect":
                # The direction reverses, so the seat after the reflecting defender is now
                # the main attacker who sent them the bout: it defends.
                self.direction = -self.direction
            self._pass_on(seat)
        elif kind == SHOW_TRUMP:
            self.shown |= bit
            self.known[seat] |= bit
            self._pass_on(seat)
        elif kind == EXCHANGE:
            low = make_card(self.rules.exchange_rank_index(), self.trump_suit)
            taken = self.trump_card
            self.hands[seat] ^= (1 << low) | (1 << taken)
            self.known[seat] |= 1 << taken
            if ev is not None:
                ev[-1] = ("exchange", seat, action, low, taken)
            self.talon[0] = low
            self.trump_card = low
            self.phase = ATTACK_PHASE
        self.action_count += 1
        if self.action_count >= self._action_cap and self.phase != OVER:
            self._finish(ACTION_CAP, None, (), f"the action cap of {self.rules.action_cap} was reached")

    def _lay(self, seat: int, card: int) -> None:
        """``seat`` lays ``card`` from its hand on the table, uncovered (an attack, a
        throw-in or a transfer): it leaves the hand and what others know of it."""
        bit = 1 << card
        self.hands[seat] ^= bit
        self.known[seat] &= ~bit
        self.attacks.append(card)
        self.covers.append(-1)

    def _pass_on(self, seat: int) -> None:
        """Transfer or shown trump: the defender becomes main attacker, the next seat defends."""
        self.transfers += 1
        self._set_roles(seat)
        if self._any_timing:
            self._enter_throw_in()
        else:
            self.phase = DEFEND_PHASE

    def _lead_done(self) -> None:
        """The main attacker has laid the bout's lead (one card, or several of one rank)."""
        if self._any_timing:
            self._enter_throw_in()
        else:
            self.phase = DEFEND_PHASE

    def _asking_done(self) -> None:
        """Every attacker passed in a row: the defender answers what is uncovered (only
        with throw_in_timing=any can there be any), else the bout ends."""
        if not self.taking and -1 in self.covers:
            self.phase = DEFEND_PHASE
        else:
            self._end_bout()

    def _set_roles(self, attacker: int) -> None:
        """``attacker`` (a seat still in) is the main attacker: the next seat in defends;
        ``order`` is the attacker, then every other seat still in, from the defender's
        next in the direction of play (``next_in``, walked once round the table), or with
        ``throw_in_order=counter_clockwise`` from the attacker's other neighbour against it."""
        n, out, step = self.players, self.out, self.direction
        self.attacker = attacker
        d = (attacker + step) % n
        while out[d]:
            d = (d + step) % n
        self.defender = d
        # Uncovered cards may never outnumber the defender's hand; at the start of a bout
        # and right after a transfer nothing is covered, so that is the hand size now.
        self.limit = min(self._cap(), self.hands[d].bit_count())
        order = [attacker]
        if self._ask_backwards:  # from the main attacker's other side round to the defender
            s = (attacker - step) % n
            while s != d:
                if not out[s]:
                    order.append(s)
                s = (s - step) % n
        else:
            s = (d + step) % n
            while s != attacker:
                if not out[s]:
                    order.append(s)
                s = (s + step) % n
        self.order = order

    def _start_bout(self, attacker: int) -> None:
        self.taking = False
        self.transfers = self.shown = 0
        self.bout += 1
        self._set_roles(attacker)
        self.phase = ATTACK_PHASE

    def _enter_throw_in(self) -> None:
        """All cards covered, or the defender takes (or, with throw_in_timing=any, after
        any card is laid): ask the attackers from the main one."""
        self.asker = self.passes = 0
        if len(self.attacks) < self.limit:
            ranks = self._throw_ranks = self._rank_mask()
            hands = self.hands
            for s in self.order:
                if hands[s] & ranks:
                    self.phase = THROW_IN_PHASE
                    return
        self._asking_done()  # the table is full, or no attacker can add a card

    def _end_bout(self) -> None:
        defender = self.defender
        table = self.table_mask()
        taken = self.taking
        ev = self.events
        if taken:
            self.hands[defender] |= table
            self.known[defender] |= table
        else:
            self.discard |= table
        self.attacks, self.covers = [], []
        if ev is not None:
            ev.append(("bout_end", defender, "taken" if taken else "beaten"))
        # Draw: main attacker, the other attackers clockwise (or counter-clockwise: draw_others,
        # whatever the asking order), the defender last.
        talon, hands = self.talon, self.hands
        talon_was_empty = not talon  # the stalemate guard counts bouts played without a talon
        if talon:
            order = self.order
            if self._draw_backwards:
                order = order[:1] + order[:0:-1]
            for s in (*order, defender):
                need = HAND_SIZE - hands[s].bit_count()
                if need <= 0:
                    continue
                drawn = talon[:-need - 1:-1]  # popped from the end, one by one
                del talon[-need:]
                hand = hands[s]
                for c in drawn:
                    hand |= 1 << c
                hands[s] = hand
                if ev is not None:
                    ev.append(("draw", s, drawn))
                if not talon:
                    self.trump_holder = s
                    self.known[s] |= 1 << drawn[-1]
                    break
        went_out = []
        if not talon:
            for s in range(self.players):
                if not self.out[s] and not hands[s]:
                    self.out[s] = True
                    went_out.append(s)
                    self.out_order.append(s)
                    if ev is not None:
                        ev.append(("out", s))
        # Nobody went out: two or more seats are still in, as at the bout's start.
        left = [s for s in range(self.players) if not self.out[s]] if went_out else None
        if left is not None and len(left) == 1:
            self._finish(NORMAL, left[0], (), "the last player holding cards is the durak")
            return
        if left is not None and not left:
            if self.rules.last_two_out == "defender_loses":
                self._finish(NORMAL, defender, tuple(went_out),
                             "everyone went out in the last bout; its defender is the durak")
            else:
                self._finish(DRAW, None, tuple(went_out), "the last players went out in the same bout")
            return
        if talon_was_empty and taken and not went_out:
            self.pickup_streak += 1
            lim = self.rules.pickup_draw_limit
            if lim is not None and self.pickup_streak >= lim:
                self._finish(STALEMATE, None, (),
                             f"{lim} takes in a row with an empty talon and nobody going out")
                return
        else:
            self.pickup_streak = 0
        self.first_bout = False
        if taken:
            nxt = self.next_in(defender)
        elif self.out[defender]:
            # The seat after the defender attacks, missing a turn to defend; with
            # defender_fairness it defends, against the same main attacker (if still in).
            if self.rules.defender_fairness and not self.out[self.attacker]:
                nxt = self.attacker
            else:
                nxt = self.next_in(defender)
        else:
            nxt = defender
        self._start_bout(nxt)

    def _finish(self, termination: str, durak: int | None, last_out: tuple[int, ...], reason: str) -> None:
        self.phase = OVER
        self.outcome = Outcome(termination, durak, last_out, reason)

    # ------------------------------------------------------------------ views

    def observe(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may see, in the protocol's map form.

        Contains the seat's own hand, every public fact (table, discard pile, face-up
        trump and who drew it, hand sizes, talon size, roles, cards publicly known to
        be in each hand) and nothing else: never another seat's private cards or the
        talon order.
        """
        text = CARD_TEXT  # views are built for every decision: table look-ups, not card_str
        view: dict[str, Any] = {
            "seat": seat,
            "players": self.players,
            "dealer": self.dealer,
            "hand": mask_str(self.hands[seat]),
            "trump": text[self.trump_card],
            "trump_suit": "CDHS"[self.trump_suit],
            "trump_holder": self.trump_holder,
            "talon": len(self.talon),
            # no strict=: mypyc compiles only a plain zip() to a native loop (attacks
            # and covers are one slot each, always the same length)
            "table": [[text[a], text[c] if c >= 0 else None]
                      for a, c in zip(self.attacks, self.covers)],  # noqa: B905
            "discard": mask_str(self.discard),
            "hand_sizes": [h.bit_count() for h in self.hands],
            "out": list(self.out),
            "attacker": self.attacker,
            "defender": self.defender,
            "phase": PHASE_NAMES[self.phase],
            "taking": self.taking,
            "bout": self.bout,
            "transfers": self.transfers,
            "attack_limit": self.limit,
            "known": [mask_str(k) for k in self.known],
            "shown": mask_str(self.shown),
        }
        if self.rules.transfer == "reflect":  # absent otherwise: earlier bytes unchanged
            view["direction"] = "clockwise" if self.direction > 0 else "counter_clockwise"
        return view

    def public_event(self, event: tuple[Any, ...], seat: int) -> dict[str, Any] | None:
        """One recorded event (from ``events``) as ``seat`` may see it, in wire form, or
        None when ``seat`` does not see it at all.

        Only a draw carries private cards, and only in the drawing seat's own copy. A
        declined trump exchange is seen only by the seat that declined: at a real table
        nothing happens, and telling others would say who holds the deck's lowest trump
        (or merely that someone does, which the talon might otherwise hide).
        """
        name = event[0]
        if name == "decline" and event[1] != seat:
            return None
        if name == "bout_end":
            return {"type": "bout_end", "result": event[2], "defender": event[1]}
        if name == "draw":
            out: dict[str, Any] = {"type": "draw", "seat": event[1], "count": len(event[2])}
            if event[1] == seat:
                out["cards"] = [card_str(c) for c in event[2]]
            return out
        if name == "out":
            return {"type": "out", "seat": event[1]}
        action = event[2]
        kind = action & 15
        out = {"type": name, "seat": event[1]}
        if kind == COVER:
            out["slot"] = action >> 10
        if kind in (ATTACK, COVER, THROW_IN, TRANSFER, SHOW_TRUMP):
            out["card"] = card_str(action >> 4 & 63)
        if name == "exchange":
            out["card"], out["trump"] = card_str(event[3]), card_str(event[4])
        return out

    def hidden_from(self, seat: int) -> int:
        """Bitmask of the cards ``seat`` cannot see: other hands' unknown cards and the
        talon except the face-up trump. (For tests of the hidden-information contract.)"""
        m = 0
        for s, h in enumerate(self.hands):
            if s != seat:
                m |= h & ~self.known[s]
        for c in self.talon[1:]:
            m |= 1 << c
        if self.talon and self.talon[0] != self.trump_card:
            m |= 1 << self.talon[0]
        return m

    def __repr__(self) -> str:
        hands = " | ".join(f"{s}:{' '.join(mask_str(h))}" for s, h in enumerate(self.hands))
        table = " ".join(f"{card_str(a)}/{card_str(c) if c >= 0 else '--'}"
                         for a, c in zip(self.attacks, self.covers, strict=True))
        return (f"<Game {PHASE_NAMES[self.phase]} bout={self.bout} trump={card_str(self.trump_card)} "
                f"att={self.attacker} def={self.defender} talon={len(self.talon)} "
                f"table=[{table}] hands=[{hands}]>")
