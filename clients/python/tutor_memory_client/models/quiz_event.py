from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.quiz_type import QuizType
from ..types import UNSET, Unset

T = TypeVar("T", bound="QuizEvent")


@_attrs_define
class QuizEvent:
    """A quiz's score.

    Attributes:
        at (str):
        max_ (float):
        score (float):
        title (str):
        type_ (QuizType):
        concepts (list[str] | Unset):
        id (None | str | Unset):
    """

    at: str
    max_: float
    score: float
    title: str
    type_: QuizType
    concepts: list[str] | Unset = UNSET
    id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at

        max_ = self.max_

        score = self.score

        title = self.title

        type_ = self.type_.value

        concepts: list[str] | Unset = UNSET
        if not isinstance(self.concepts, Unset):
            concepts = self.concepts

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "max": max_,
                "score": score,
                "title": title,
                "type": type_,
            }
        )
        if concepts is not UNSET:
            field_dict["concepts"] = concepts
        if id is not UNSET:
            field_dict["id"] = id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = d.pop("at")

        max_ = d.pop("max")

        score = d.pop("score")

        title = d.pop("title")

        type_ = QuizType(d.pop("type"))

        concepts = cast(list[str], d.pop("concepts", UNSET))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        quiz_event = cls(
            at=at,
            max_=max_,
            score=score,
            title=title,
            type_=type_,
            concepts=concepts,
            id=id,
        )

        quiz_event.additional_properties = d
        return quiz_event

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
