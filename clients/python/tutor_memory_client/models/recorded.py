from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.recorded_episode import RecordedEpisode


T = TypeVar("T", bound="Recorded")


@_attrs_define
class Recorded:
    """What recording did.

    Attributes:
        already_imported (bool): This exact history file was imported before: nothing was done.
        appended (int): Episodes appended.
        episodes (list[RecordedEpisode]): The episode each event is, in the order given (absent when the whole
            file was already imported).
        events (int): Events given.
        file_versions (int): File versions stored.
        head_seq (int): The chain's head after the write.
        skipped (int): Events already recorded (the same event), skipped.
        subject (str): `learner/subject`.
        warnings (list[str]): What the caller should know that did not stop the write: a file
            whose model-made concept list was refused and the offline
            extractor's kept instead.
    """

    already_imported: bool
    appended: int
    episodes: list[RecordedEpisode]
    events: int
    file_versions: int
    head_seq: int
    skipped: int
    subject: str
    warnings: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        already_imported = self.already_imported

        appended = self.appended

        episodes = []
        for episodes_item_data in self.episodes:
            episodes_item = episodes_item_data.to_dict()
            episodes.append(episodes_item)

        events = self.events

        file_versions = self.file_versions

        head_seq = self.head_seq

        skipped = self.skipped

        subject = self.subject

        warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "already_imported": already_imported,
                "appended": appended,
                "episodes": episodes,
                "events": events,
                "file_versions": file_versions,
                "head_seq": head_seq,
                "skipped": skipped,
                "subject": subject,
                "warnings": warnings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.recorded_episode import RecordedEpisode

        d = dict(src_dict)
        already_imported = d.pop("already_imported")

        appended = d.pop("appended")

        episodes = []
        _episodes = d.pop("episodes")
        for episodes_item_data in _episodes:
            episodes_item = RecordedEpisode.from_dict(episodes_item_data)

            episodes.append(episodes_item)

        events = d.pop("events")

        file_versions = d.pop("file_versions")

        head_seq = d.pop("head_seq")

        skipped = d.pop("skipped")

        subject = d.pop("subject")

        warnings = cast(list[str], d.pop("warnings"))

        recorded = cls(
            already_imported=already_imported,
            appended=appended,
            episodes=episodes,
            events=events,
            file_versions=file_versions,
            head_seq=head_seq,
            skipped=skipped,
            subject=subject,
            warnings=warnings,
        )

        recorded.additional_properties = d
        return recorded

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
