"""The benchmark's case filter: names hold ', ' inside parentheses, so a plain split on commas
once matched every case (" 1" is in almost every name)."""
import argparse

from bench import run


def _chosen(cases):
    args = argparse.Namespace(device="cuda", quick=False, cases=cases, dtypes="")
    return [c.name for c in run.select_cases(args)]


def test_commas_inside_names_stay_in_the_substring():
    assert run.split_case_filter("5-D,(2, 1, 0),[1:, 1:]") == ["5-D", "(2, 1, 0)", "[1:, 1:]"]
    assert _chosen("(2, 1, 0),8193x8193") == ["fp32 8193x8193[1:, 1:]", "fp32 1024x1024x64 (2, 1, 0)"]


def test_plain_substrings_still_match_several_cases():
    chosen = _chosen("8192x8192,4194304x16")
    assert "fp32 8192x8192" in chosen and "int8 8192x8192" in chosen and "fp32 4194304x16" in chosen
    assert not any("5-D" in name for name in chosen)
