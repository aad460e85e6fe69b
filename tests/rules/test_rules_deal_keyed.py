"""Keyed deals (docs/RULES.md "Deck order"): every deck is
HMAC-SHA256(run seed, deal id) feeding Fisher-Yates, pinned by test vectors so another
implementation can re-derive it, and unpredictable without the seed to a bot that knows
the formula, the deal ids, the previous run's seed and every earlier deck."""

from __future__ import annotations

import hashlib
import hmac
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules import shuffled_deck
from referee.rules.cards import card_str, deck_cards
from referee.rules.deal import (
    SEED_MAX_LEN,
    SEED_STATES_KEPT,
    SeedError,
    check_seed,
    deal_deck,
    deal_id,
    deal_key,
    deal_words,
)


def text(deck: list[int]) -> str:
    return " ".join(card_str(c) for c in deck)


# -- the algorithm, pinned ------------------------------------------------------------


def test_pinned_vectors_for_every_deck_size() -> None:
    """Changing any of these changes every deal of every stored seed: it must not
    happen by accident (docs/RULES.md states the algorithm these come from)."""
    assert text(deal_deck("durak-ref", "match:0", 24)) == (
        "JD KC 9C 9H 9D KH TS KD AS JC JH AH AD 9S QD KS TC AC QH JS QS TH QC TD")
    assert text(deal_deck("durak-ref", "match:0", 36)) == (
        "JD AS 6H 8H KS TS QH 7C QC KC 8S 8D JC 9D TH QD 7D 6S AC 9H 8C AD 7S AH 6D JS JH KD "
        "TC QS 7H 9S 6C 9C KH TD")
    assert text(deal_deck("durak-ref", "match:0", 52)).startswith("4D 8S TH 7C 5H AS QD AC 2H JH")
    assert text(deal_deck("00112233445566778899aabbccddeeff", "tournament:7", 36)).startswith(
        "KC KH QH 9C 9S TH KS JD TS 9D")


def test_step_one_is_plain_hmac_sha256_of_the_deal_id_keyed_by_the_seed() -> None:
    # The constant comes from `printf match:0 | openssl dgst -sha256 -hmac durak-ref`.
    key = bytes.fromhex("6d1f03bfcd41c16531e0851781fa5ec625423eba9d3217deb41718679d481b25")
    assert hmac.new(b"durak-ref", b"match:0", hashlib.sha256).digest() == key
    block0 = hmac.new(key, (0).to_bytes(4, "big"), hashlib.sha256).digest()
    block1 = hmac.new(key, (1).to_bytes(4, "big"), hashlib.sha256).digest()
    words = deal_words("durak-ref", "match:0")
    stream = b"".join(next(words).to_bytes(4, "big") for _ in range(16))
    assert stream == block0 + block1


@given(seed=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
                    max_size=SEED_MAX_LEN),
       gid=st.text(max_size=80))
def test_the_word_stream_is_hmac_sha256_as_the_standard_library_computes_it(seed: str, gid: str) -> None:
    """The referee spells HMAC out on SHA-256 states it keeps (the seed's per run): the
    bytes are the standard library's, for seeds shorter and longer than SHA-256's 64-byte
    block (a longer key is hashed first) and for any deal id."""
    key = hmac.new(seed.encode(), gid.encode(), hashlib.sha256).digest()
    assert deal_key(seed, gid) == key
    words = deal_words(seed, gid)
    stream = b"".join(next(words).to_bytes(4, "big") for _ in range(8 * 20))
    assert stream == b"".join(hmac.new(key, j.to_bytes(4, "big"), hashlib.sha256).digest()
                              for j in range(20))


@pytest.mark.parametrize("seed", ["k" * 63, "k" * 64, "k" * 65, "é" * 32, "é" * 32 + "k"])
def test_keys_at_sha256s_block_size_are_hashed_only_past_it(seed: str) -> None:
    # RFC 2104: a key longer than the 64-byte block is hashed first; one of exactly 64
    # bytes is not ("é" is two bytes in UTF-8: 64 and 65 bytes).
    for gid in ("match:0", "sprt:17"):
        assert deal_key(seed, gid) == hmac.new(seed.encode(), gid.encode(), hashlib.sha256).digest()


def test_the_keyed_states_kept_are_bounded() -> None:
    from referee.rules import deal

    for k in range(3 * SEED_STATES_KEPT):
        deal_deck(f"bound-{k}", "match:0", 24)
        assert len(deal._SEED_STATES) <= SEED_STATES_KEPT


def test_a_seed_met_before_deals_what_it_dealt_the_first_time() -> None:
    """The keyed states of the seeds met last are kept (every deal of a run is keyed by
    its seed): deals under many seeds in turn, more than are kept, and then again under
    the first ones, give the same decks as the first time, and one run's seed never
    stands in for another's."""
    seeds = [f"seed-{k}" for k in range(SEED_STATES_KEPT + 5)]
    first = {seed: deal_deck(seed, "match:1", 36) for seed in seeds}
    assert len({tuple(deck) for deck in first.values()}) == len(seeds)
    for seed in reversed(seeds):
        assert deal_deck(seed, "match:1", 36) == first[seed]
    assert deal_deck("x" * 65, "match:1", 36) != deal_deck("x" * 64, "match:1", 36)


def test_the_shuffle_follows_the_documented_fisher_yates_with_rejection() -> None:
    """A second, literal reading of the documented algorithm gives the same decks."""
    for seed, gid, size in [("1", "match:0", 36), ("x", "sprt:3", 24), ("k" * 128, "ladder:9", 52)]:
        deck = deck_cards(size)
        words = deal_words(seed, gid)
        for i in range(size - 1, 0, -1):
            b = i + 1
            while (w := next(words)) >= 2**32 - 2**32 % b:
                pass
            j = w % b
            deck[i], deck[j] = deck[j], deck[i]
        assert deck == deal_deck(seed, gid, size)


@given(seed=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
                    max_size=SEED_MAX_LEN),
       gid=st.text(max_size=40), size=st.sampled_from([24, 36, 52]))
def test_every_derived_deck_is_a_permutation_of_the_deck(seed: str, gid: str, size: int) -> None:
    deck = deal_deck(seed, gid, size)
    assert sorted(deck) == deck_cards(size)
    assert deal_deck(seed, gid, size) == deck  # deterministic


def test_deal_ids_are_canonical_and_shared_by_rotations() -> None:
    assert deal_id("match", 3) == "match:3"
    assert deal_id("tournament", 0) == "tournament:0"
    # Seat rotations of a duplicate deal use one id, hence one deck.
    assert deal_deck("s", deal_id("sprt", 5), 36) == deal_deck("s", "sprt:5", 36)


# -- seeds ----------------------------------------------------------------------------


def test_seeds_are_text_and_ints_key_as_their_decimal_form() -> None:
    assert check_seed(42) == "42" and check_seed(-7) == "-7"
    assert check_seed("3f2a9c") == "3f2a9c"
    assert deal_deck(check_seed(42), "match:0", 36) == deal_deck("42", "match:0", 36)


@pytest.mark.parametrize("bad, says", [
    ("", "empty"), ("a b", "no spaces"), ("tab\there", "no spaces"), ("ключ", "ASCII"),
    ("x" * (SEED_MAX_LEN + 1), "at most"), (True, "string or an integer"),
    (1.5, "string or an integer"), (10**200, "at most"),
])
def test_unusable_seeds_are_refused_with_a_reason(bad: object, says: str) -> None:
    with pytest.raises(SeedError, match=says):
        check_seed(bad)  # type: ignore[arg-type]


# -- the attacker's view --------------------------------------------------------------


THIS_RUN = "9b4c1e07a3d25f6e8c1b0a7d3e2f4c59"  # stands in for a secret the bot does not have
LAST_RUN = "5d0e3a8c7b2f419e6a1c0d3b8e7f2a41"  # the previous run's seed, printed at its end


def test_no_other_key_and_no_old_formula_gives_the_next_deck() -> None:
    """The bot knows the formula, every deal id, the previous run's seed and every deck
    dealt so far in this run: each guess it can compute from those misses."""
    size = 36
    dealt = [deal_deck(THIS_RUN, deal_id("match", i), size) for i in range(50)]
    for k in range(1, 50):
        real = dealt[k]
        gid = deal_id("match", k)
        guesses = [deal_deck(LAST_RUN, gid, size),                    # last run's key
                   deal_deck("1", gid, size),                         # the old default seed
                   deal_deck(THIS_RUN, deal_id("match", k - 1), size),  # the previous deal
                   deal_deck(gid, gid, size),                         # the id as key
                   shuffled_deck(size, f"1:{k}"),                     # old '{seed}:{game}'
                   shuffled_deck(size, f"{LAST_RUN}:{k}"),
                   shuffled_deck(size, f"T1:d{k}"), shuffled_deck(size, f"S1:d{k}")]
        # Earlier decks used as keys, and as the deck itself.
        guesses += [deal_deck(" ".join(map(str, d)), gid, size) for d in dealt[:k]]
        guesses += dealt[:k]
        assert all(g != real for g in guesses)
        # Not even the first six cards (a hand) of any guess are right.
        assert sum(g[:6] == real[:6] for g in guesses) == 0


def test_first_cards_are_not_correlated_with_the_game_index() -> None:
    """3600 games of one run: the first card is uniform over the 36 (chi-square far
    below the 0.1% critical value 66.6 for 35 degrees of freedom) and uncorrelated
    with the game number and with the previous game's first card (|r| < 4/sqrt(n))."""
    n = 3600
    firsts = [deal_deck(THIS_RUN, deal_id("match", i), 36)[0] for i in range(n)]
    counts = [firsts.count(c) for c in deck_cards(36)]
    chi2 = sum((c - n / 36) ** 2 / (n / 36) for c in counts)
    assert chi2 < 66.6
    bound = 4 / n ** 0.5
    assert abs(statistics.correlation(range(n), firsts)) < bound
    assert abs(statistics.correlation(firsts[:-1], firsts[1:])) < bound
    # And the trump (deck[12] for two players) does not follow the game index either.
    trumps = [deal_deck(THIS_RUN, deal_id("match", i), 36)[12] % 4 for i in range(n)]
    assert abs(statistics.correlation(range(n), trumps)) < bound
