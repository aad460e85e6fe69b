"""Which names look alike (referee/seats/names.py): Unicode's confusable skeleton (UTS #39,
section 4: NFD, each character to its prototype in confusables.txt, NFD again), as ICU
computes it, and the same without regard to case. Known pairs from Unicode's data, and
the names of issue 35's attack (Cyrillic letters in Latin names)."""

from __future__ import annotations

import pytest

from referee.seats.names import NameIndex, look_alike, name_keys, skeleton, starts_like


@pytest.mark.parametrize(("spoof", "prototype"), [
    ("pаypal", "paypal"),   # U+0430 CYRILLIC SMALL LETTER A
    ("ехреrt", "expert"),   # Cyrillic е, х, р, е
    ("grееdy", "greedy"),
    ("аlpha", "alpha"),
    ("a1pha", "alpha"),     # DIGIT ONE -> l
    ("paypaI", "paypal"),   # LATIN CAPITAL LETTER I -> l
    ("0ld", "Old"),         # DIGIT ZERO -> O
])
def test_a_spoof_has_the_skeleton_of_the_name_it_imitates(spoof: str, prototype: str) -> None:
    assert spoof != prototype
    assert skeleton(spoof) == skeleton(prototype)


def test_m_is_rn_in_unicodes_data_so_both_skeletons_spell_rn() -> None:
    # confusables.txt maps U+006D m to "rn" (not the other way round): the skeleton of
    # a name with an m has "rn" in its place, and so does the skeleton of "rn" itself.
    assert skeleton("m") == "rn" and skeleton("rn") == "rn"
    assert skeleton("modern") == skeleton("rnodern") == "rnodern"
    assert skeleton("vіctim") == skeleton("victim") == "victirn"  # U+0456 і


@pytest.mark.parametrize(("one", "other"), [
    ("alice", "bob"), ("twin", "twin#2"), ("greedy", "greedy2"), ("expert", "experts"),
    ("ivan", "lvan"),  # small i and small l are not confusables in Unicode's data
])
def test_names_that_differ_by_eye_do_not_clash(one: str, other: str) -> None:
    assert look_alike(one, [other]) is None and look_alike(other, [one]) is None


def test_case_is_a_second_key_not_a_fold_before_the_skeleton() -> None:
    # Without regard to case: Greedy, GREEDY clash with greedy (by the fold's key) ...
    assert look_alike("Greedy", ["alice", "greedy"]) == "greedy"
    assert look_alike("GRЕEDY", ["greedy"]) == "greedy"  # and a Cyrillic capital Е
    # ... and a fold first would lose capital I against small l (I folds to i).
    assert look_alike("aIpha", ["alpha"]) == "alpha"
    assert name_keys("aIpha") == {"alpha", "aipha"}
    # The fold comes after the skeleton too: 0's prototype is capital O, so s0lver looks
    # like solver without regard to case (as S0LVER looks like SOLVER by the skeleton).
    assert skeleton("s0lver") == "sOlver" and look_alike("s0lver", ["solver"]) == "solver"


def test_compatibility_forms_clash_through_nfkc_which_the_skeleton_alone_leaves_out() -> None:
    # Unicode's confusables.txt maps fullwidth ｇ, ｅ, ｙ but not ｒ or ｄ (NFKC's job).
    assert skeleton("ｇｒｅｅｄｙ") != skeleton("greedy")
    assert look_alike("ｇｒｅｅｄｙ", ["greedy"]) == "greedy"
    assert look_alike("ﬁsh", ["fish"]) == "fish"  # the fi ligature


def test_an_identical_name_is_the_first_clash() -> None:
    assert look_alike("greedy", ["random", "greedy", "grееdy"]) == "greedy"
    assert look_alike("zed", []) is None


def test_a_bot_spec_prefix_is_recognised_under_its_disguises() -> None:
    assert starts_like("tсp:alice", ("builtin:", "tcp:")) == "tcp:"  # U+0441 с
    assert starts_like("BUILTIN:greedy", ("builtin:", "tcp:")) == "builtin:"
    assert starts_like("ｔｃｐ：x", ("tcp:",)) == "tcp:"  # fullwidth colon too
    assert starts_like("tcpfan", ("builtin:", "tcp:")) is None


def test_an_index_finds_the_first_name_added_that_a_name_is_or_looks_like() -> None:
    # The lobby's store of names and the TCP gate's registered names are indexed by key,
    # so a lookup does not read every name; the answer is the look_alike one.
    index = NameIndex(["alpha", "ALPHA", "victim"])
    assert index.find("аlpha") == "alpha"  # Cyrillic а
    assert index.find("alpha", other_than="alpha") == "ALPHA"  # a name is left out of its own check
    assert index.find("vіctim") == "victim" and index.find("gamma") is None
    index.add("beta")
    assert index.find("bеta") == "beta" == look_alike("bеta", ["alpha", "beta"])
