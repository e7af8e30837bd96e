from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ClassStale")


@_attrs_define
class ClassStale:
    """A stale citation of one learner's.

    Attributes:
        at (datetime.datetime):
        change (str): `changed: replaced by notes.md v2`, `changed: removed`.
        episode_id (int):
        learner (str):
        summary (str):
    """

    at: datetime.datetime
    change: str
    episode_id: int
    learner: str
    summary: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        change = self.change

        episode_id = self.episode_id

        learner = self.learner

        summary = self.summary

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "change": change,
                "episode_id": episode_id,
                "learner": learner,
                "summary": summary,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        change = d.pop("change")

        episode_id = d.pop("episode_id")

        learner = d.pop("learner")

        summary = d.pop("summary")

        class_stale = cls(
            at=at,
            change=change,
            episode_id=episode_id,
            learner=learner,
            summary=summary,
        )

        class_stale.additional_properties = d
        return class_stale

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
