from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TurnRequest")


@_attrs_define
class TurnRequest:
    """
    Attributes:
        text (str): The learner's message.
        assessment (None | str | Unset): A legacy "assessment results" section of the host's prompt.
        at (None | str | Unset): When it was said (RFC 3339; default: now).
        budget (int | None | Unset): Token budget of the block.
        id (None | str | Unset): External id for the learner's message episode.
        system (None | str | Unset): The host's system prompt (default: a short tutor prompt).
        tz (None | str | Unset): The learner's time zone (default: the subject's).
    """

    text: str
    assessment: None | str | Unset = UNSET
    at: None | str | Unset = UNSET
    budget: int | None | Unset = UNSET
    id: None | str | Unset = UNSET
    system: None | str | Unset = UNSET
    tz: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        assessment: None | str | Unset
        if isinstance(self.assessment, Unset):
            assessment = UNSET
        else:
            assessment = self.assessment

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

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        system: None | str | Unset
        if isinstance(self.system, Unset):
            system = UNSET
        else:
            system = self.system

        tz: None | str | Unset
        if isinstance(self.tz, Unset):
            tz = UNSET
        else:
            tz = self.tz

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "text": text,
            }
        )
        if assessment is not UNSET:
            field_dict["assessment"] = assessment
        if at is not UNSET:
            field_dict["at"] = at
        if budget is not UNSET:
            field_dict["budget"] = budget
        if id is not UNSET:
            field_dict["id"] = id
        if system is not UNSET:
            field_dict["system"] = system
        if tz is not UNSET:
            field_dict["tz"] = tz

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        text = d.pop("text")

        def _parse_assessment(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        assessment = _parse_assessment(d.pop("assessment", UNSET))

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

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_system(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        system = _parse_system(d.pop("system", UNSET))

        def _parse_tz(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tz = _parse_tz(d.pop("tz", UNSET))

        turn_request = cls(
            text=text,
            assessment=assessment,
            at=at,
            budget=budget,
            id=id,
            system=system,
            tz=tz,
        )

        return turn_request
