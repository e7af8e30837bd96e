from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="BlockBody")


@_attrs_define
class BlockBody:
    """
    Attributes:
        question (str): The learner's question.
        at (None | str | Unset): The turn's instant (RFC 3339; default: now). Ages and windows count from it.
        budget (int | None | Unset): Token budget (o200k; default 1200).
        tz (None | str | Unset): The learner's time zone (default: the subject's, else UTC).
    """

    question: str
    at: None | str | Unset = UNSET
    budget: int | None | Unset = UNSET
    tz: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        question = self.question

        at: None | str | Unset
        if isinstance(self.at, Unset):
            at = UNSET
        else:
            at = self.at

        budget: int | None | Unset
        if isinstance(self.budget, Unset):
            budget = UNSET
        else:
            budget = self.budget

        tz: None | str | Unset
        if isinstance(self.tz, Unset):
            tz = UNSET
        else:
            tz = self.tz

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "question": question,
            }
        )
        if at is not UNSET:
            field_dict["at"] = at
        if budget is not UNSET:
            field_dict["budget"] = budget
        if tz is not UNSET:
            field_dict["tz"] = tz

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        question = d.pop("question")

        def _parse_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        at = _parse_at(d.pop("at", UNSET))

        def _parse_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        budget = _parse_budget(d.pop("budget", UNSET))

        def _parse_tz(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tz = _parse_tz(d.pop("tz", UNSET))

        block_body = cls(
            question=question,
            at=at,
            budget=budget,
            tz=tz,
        )

        return block_body
