from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="GroundingRequest")


@_attrs_define
class GroundingRequest:
    """
    Attributes:
        answer (str): The tutor's answer.
        question (str): The learner's question (passages are retrieved for it).
        answer_id (None | str | Unset): The recorded answer episode to save the stance on: its external id.
        at (None | str | Unset): When the turn happened (RFC 3339; default: now); dates memory labels.
        recalled (list[int] | Unset): Episode ids recalled for the turn (the block's `recalled[].id`).
    """

    answer: str
    question: str
    answer_id: None | str | Unset = UNSET
    at: None | str | Unset = UNSET
    recalled: list[int] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        answer = self.answer

        question = self.question

        answer_id: None | str | Unset
        if isinstance(self.answer_id, Unset):
            answer_id = UNSET
        else:
            answer_id = self.answer_id

        at: None | str | Unset
        if isinstance(self.at, Unset):
            at = UNSET
        else:
            at = self.at

        recalled: list[int] | Unset = UNSET
        if not isinstance(self.recalled, Unset):
            recalled = self.recalled

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "answer": answer,
                "question": question,
            }
        )
        if answer_id is not UNSET:
            field_dict["answer_id"] = answer_id
        if at is not UNSET:
            field_dict["at"] = at
        if recalled is not UNSET:
            field_dict["recalled"] = recalled

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        answer = d.pop("answer")

        question = d.pop("question")

        def _parse_answer_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        answer_id = _parse_answer_id(d.pop("answer_id", UNSET))

        def _parse_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        at = _parse_at(d.pop("at", UNSET))

        recalled = cast(list[int], d.pop("recalled", UNSET))

        grounding_request = cls(
            answer=answer,
            question=question,
            answer_id=answer_id,
            at=at,
            recalled=recalled,
        )

        return grounding_request
