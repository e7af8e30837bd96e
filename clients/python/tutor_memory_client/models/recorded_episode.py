from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RecordedEpisode")


@_attrs_define
class RecordedEpisode:
    """The episode one event became (or already was).

    Attributes:
        appended (bool): False when the event was already recorded.
        id (int):
        seq (int):
    """

    appended: bool
    id: int
    seq: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        appended = self.appended

        id = self.id

        seq = self.seq

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "appended": appended,
                "id": id,
                "seq": seq,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        appended = d.pop("appended")

        id = d.pop("id")

        seq = d.pop("seq")

        recorded_episode = cls(
            appended=appended,
            id=id,
            seq=seq,
        )

        recorded_episode.additional_properties = d
        return recorded_episode

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
