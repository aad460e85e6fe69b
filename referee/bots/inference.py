"""What the other seats' past decisions say about their hidden cards (the search's deals).

The determinizations of referee/bots/ismcts.py place the cards a seat cannot see
uniformly at random: every hand of the right size is as likely as any other. But the
other seats chose what they did with the cards they held, and a seat that led a nine
while holding a six, or took a seven it could have covered with an eight, played
unlike a sensible player. ``Inference`` reads a seat's observations of one game, in
order, and keeps for every other seat a weight per card: 1 when nothing speaks against
the seat holding it, ``1 - strength`` when a sensible player holding it would most
likely have played differently. ``searchcore.deal`` then draws each seat's unseen cards
with chances proportional to these weights. Nothing is ever excluded outright: a seat
may be no sensible player, and a wrong hint only tilts the deals.

The sensible-player model (what ``protocol.strategies.greedy_choose`` does, kept to its
robust parts; card cost: the rank, trumps above every non-trump):

- a lead: no card cheaper than the card led;
- a throw-in: no cheaper card of a rank on the table that it could have thrown;
- a cover of an attack card: no cheaper card that beats it;
- a take facing one uncovered card: no card that beats it cheaply (a non-trump of its
  suit, or a trump; while more than ten cards lie in the talon only trumps below the
  queen count as cheap);
- a pass at the end of a beaten bout (read from this seat's own last cover and the
  discard pile): no non-trump of a rank on the table below the queen while the talon
  lasts, no card of those ranks at all once it is empty.

Only evidence that can be pinned on one seat counts: the lead is the main attacker's,
covers and takes the defender's; a throw-in (and a pass) is someone's only while a
single other seat attacks. A bout with a transfer is skipped (the roles moved).

What a seat lacked when it decided it lacks until it draws: within a bout nobody draws,
so the bout's evidence is read afresh from each observation's table. At a bout's end
it is kept (the lowest weight per card), and every draw since softens it: a seat that
drew ``d`` of a talon of ``T`` cards holds a given talon card with chance ``d / T``.

Everything here is read from the observation maps this seat was sent and the actions
it answered (``observe``, ``answered``): the public history as the seat saw it, never
the referee's state; tests/referee/test_expert.py re-deals hidden cards consistently
with the observations and checks the choice does not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..rules.cards import BEATERS, RANK_MASK, SUIT_MASK, iter_bits, parse_card

#: The queen's rank index (0 is "2"): the model's "high" non-trump and trump.
_QUEEN = 10
#: More cards than this in the talon: high trumps are kept rather than spent (greedy's rule).
_THICK_TALON = 10
#: Every card of the 52, and every card below the queen.
_ALL = (1 << 52) - 1
_BELOW_QUEEN = sum(RANK_MASK[r] for r in range(_QUEEN))


def _cost(card: int, trump: int) -> int:
    """A card's worth to its holder: its rank, 20 more for a trump."""
    return (card >> 2) + (20 if card & 3 == trump else 0)


def _cheaper(mask: int, card: int, trump: int) -> int:
    """The cards of ``mask`` that cost less than ``card``."""
    limit = _cost(card, trump)
    out = 0
    for c in iter_bits(mask):
        if _cost(c, trump) < limit:
            out |= 1 << c
    return out


def _ranks_mask(cards: list[int]) -> int:
    """Every card of the ranks of ``cards``."""
    out = 0
    for c in cards:
        out |= RANK_MASK[c >> 2]
    return out


def _throwable(ranks: int, trump: int, talon: int) -> int:
    """Of the cards ``ranks``, those a sensible attacker throws in: non-trumps below the
    queen while the talon lasts, any once it is empty."""
    if not talon:
        return ranks
    return ranks & _BELOW_QUEEN & ~SUIT_MASK[trump]


class Inference:
    """One seat's reading of the others' decisions over one game (module docstring).

    ``strength`` in [0, 1): how much less likely a card the model says a seat lacks is
    in its hand (0: no inference, every weight stays 1)."""

    def __init__(self, strength: float, throw_in_ranks: str = "all") -> None:
        self.strength = strength
        self.attacks_only = throw_in_ranks == "attacks"
        self._kept: list[list[float]] = []   #: per seat, per card: the weight from past bouts
        self._bout: list[int] = []           #: per seat: the cards the current bout says it lacks
        self._last: Mapping[str, Any] | None = None  #: the previous observation
        self._answer: Mapping[str, Any] | None = None  #: this seat's answer to it
        self._mine = 0                       #: the cards this seat put on the table this bout

    def observe(self, obs: Mapping[str, Any]) -> None:
        """Read the observation of this seat's next decision (every one, in order)."""
        if not self.strength:
            return
        if not self._kept:
            self._kept = [[1.0] * 64 for _ in range(obs["players"])]
            self._bout = [0] * obs["players"]
        last = self._last
        if last is not None and last["bout"] != obs["bout"]:
            self._end_bout(last, obs)
            self._mine = 0
        self._bout = self._bout_evidence(obs)
        self._last, self._answer = obs, None

    def answered(self, action: Mapping[str, Any]) -> None:
        """This seat answered the last observation with ``action`` (a wire action map)."""
        if not self.strength:
            return
        self._answer = action
        card = action.get("card")
        if card is not None:
            self._mine |= 1 << parse_card(card)

    def weights(self) -> list[list[float]] | None:
        """Per seat, per card int, the weight of the seat holding that card (an empty
        list: no evidence, deal it uniformly); None when there is no evidence at all."""
        if not self._kept:
            return None
        low = 1.0 - self.strength
        out: list[list[float]] = []
        for kept, bout in zip(self._kept, self._bout):
            if not bout and min(kept) == 1.0:
                out.append([])
                continue
            w = kept[:]
            for c in iter_bits(bout):
                w[c] = min(w[c], low)
            out.append(w)
        return out if any(out) else None

    # ----------------------------------------------------------------- the bout's table

    def _bout_evidence(self, obs: Mapping[str, Any]) -> list[int]:
        """Per seat, the cards the current bout's table says it lacks."""
        n, me = obs["players"], obs["seat"]
        lacks = [0] * n
        if obs["transfers"] or obs.get("direction") is not None:
            return lacks
        trump = "CDHS".index(obs["trump_suit"])
        attacks = [parse_card(a) for a, _ in obs["table"]]
        covers = [None if c is None else parse_card(c) for _, c in obs["table"]]
        attacker, defender = obs["attacker"], obs["defender"]
        if not attacks:
            return lacks
        if attacker != me and not self._mine >> attacks[0] & 1:
            lacks[attacker] |= _cheaper(_ALL, attacks[0], trump)
        thrower = self._lone_other_attacker(obs)
        for i in range(1, len(attacks)):
            if thrower is None or self._mine >> attacks[i] & 1:
                continue
            ranks = _ranks_mask(attacks[:i] + ([] if self.attacks_only else
                                               [c for c in covers[:i] if c is not None]))
            lacks[thrower] |= _cheaper(ranks, attacks[i], trump)
        if defender != me:
            for a, c in zip(attacks, covers):
                if c is not None:
                    lacks[defender] |= _cheaper(BEATERS[trump][a], c, trump)
            open_ = [a for a, c in zip(attacks, covers) if c is None]
            if obs["taking"] and len(open_) == 1:
                beaters = BEATERS[trump][open_[0]]
                if obs["talon"] > _THICK_TALON:
                    beaters &= _BELOW_QUEEN | ~SUIT_MASK[trump]  # high trumps are kept
                lacks[defender] |= beaters
        return lacks

    def _lone_other_attacker(self, obs: Mapping[str, Any]) -> int | None:
        """The one seat besides this one that may put attack cards on this bout's table,
        or None when several may (a throw-in could be any of theirs)."""
        n, me, defender = obs["players"], obs["seat"], obs["defender"]
        others = [s for s in range(n) if s not in (me, defender) and not obs["out"][s]]
        return others[0] if len(others) == 1 else None

    # ----------------------------------------------------------------- a bout's end

    def _end_bout(self, last: Mapping[str, Any], obs: Mapping[str, Any]) -> None:
        """Keep what the ended bout said (with the passes that ended it), then soften it
        all by the draws since ``last``."""
        lacks = self._bout
        passed = self._final_passes(last, obs)
        if passed is not None:
            seats, mask = passed
            for s in seats:
                lacks[s] |= mask
        low = 1.0 - self.strength
        for kept, mask in zip(self._kept, lacks):
            for c in iter_bits(mask):
                kept[c] = min(kept[c], low)
        self._soften(last, obs)

    def _final_passes(self, last: Mapping[str, Any], obs: Mapping[str, Any]
                      ) -> tuple[list[int], int] | None:
        """When this seat, defending, covered the last open card in ``last`` and the bout
        then ended beaten (its table is in the discard pile of ``obs``): the attackers
        who then passed (the lone other attacker) and the cards that says they lack."""
        answer = self._answer
        if answer is None or answer.get("type") != "cover" or last["defender"] != last["seat"]:
            return None
        if last["transfers"] or sum(c is None for _, c in last["table"]) != 1:
            return None
        table = [parse_card(c) for pair in last["table"] for c in pair if c is not None]
        table.append(parse_card(answer["card"]))
        discard = {parse_card(c) for c in obs["discard"]}
        if not set(table) <= discard:
            return None
        if len(last["table"]) >= last["attack_limit"] or last["hand_sizes"][last["seat"]] <= 1:
            return None  # no card could have been added: the pass says nothing
        thrower = self._lone_other_attacker(last)
        if thrower is None:
            return None
        trump = "CDHS".index(last["trump_suit"])
        ranks = _ranks_mask(table[0::2] if self.attacks_only else table)
        return [thrower], _throwable(ranks, trump, last["talon"])

    def _soften(self, last: Mapping[str, Any], obs: Mapping[str, Any]) -> None:
        """The draws between ``last`` and ``obs``: this seat's own are the cards of its
        hand it could not see before; the rest of the talon's shrink is shared evenly
        by the other seats still in. A kept weight ``w`` of a seat that drew ``d`` of
        ``T`` talon cards becomes ``1 - (1 - w)(1 - d/T)``."""
        talon = last["talon"]
        drawn = talon - obs["talon"]
        if drawn <= 0:
            return
        me = obs["seat"]
        seen = {c for pair in last["table"] for c in pair if c is not None}
        seen |= set(last["hand"]) | set(last["discard"])
        mine = sum(1 for c in obs["hand"] if c not in seen)
        others = [s for s in range(obs["players"]) if s != me and not last["out"][s]]
        if not others:
            return
        share = min(1.0, max(0, drawn - mine) / len(others) / talon)
        for s in others:
            kept = self._kept[s]
            for c in range(64):
                if kept[c] < 1.0:
                    kept[c] = 1.0 - (1.0 - kept[c]) * (1.0 - share)
