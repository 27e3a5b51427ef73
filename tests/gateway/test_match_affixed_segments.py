"""Matching requests to templates whose parameter has literal text around it (``{Sid}.json``)."""

from __future__ import annotations

from skillhouse.gateway.matching import match_path


def test_an_affixed_parameter_matches_the_text_between_prefix_and_suffix() -> None:
    assert match_path("/Accounts/{Sid}.json", "/Accounts/AC123.json") == {"Sid": "AC123"}
    assert match_path("/Accounts/{Sid}.json", "/Accounts/AC%2F1.json") == {"Sid": "AC/1"}
    assert match_path("/v1/v{n}-beta/x", "/v1/v2-beta/x") == {"n": "2"}


def test_an_affixed_parameter_needs_its_literal_text_and_a_value() -> None:
    assert match_path("/Accounts/{Sid}.json", "/Accounts/AC123.xml") is None
    assert match_path("/Accounts/{Sid}.json", "/Accounts/.json") is None
    assert match_path("/Accounts/{Sid}.json", "/Accounts/AC123") is None


def test_whole_segment_parameters_still_match_as_before() -> None:
    assert match_path("/bookings/{id}", "/bookings/42") == {"id": "42"}
    assert match_path("/bookings/{id}", "/bookings/") is None
