from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.belief_step import BeliefStep


T = TypeVar("T", bound="BeliefView")


@_attrs_define
class BeliefView:
    """
    Attributes:
        about (str):
        anchor (str): Anchor-safe id of the belief.
        claim (str):
        confidence (float):
        flagged (bool):
        history (list[BeliefStep]): Every row, oldest first.
    """

    about: str
    anchor: str
    claim: str
    confidence: float
    flagged: bool
    history: list[BeliefStep]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        about = self.about

        anchor = self.anchor

        claim = self.claim

        confidence = self.confidence

        flagged = self.flagged

        history = []
        for history_item_data in self.history:
            history_item = history_item_data.to_dict()
            history.append(history_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "about": about,
                "anchor": anchor,
                "claim": claim,
                "confidence": confidence,
                "flagged": flagged,
                "history": history,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.belief_step import BeliefStep

        d = dict(src_dict)
        about = d.pop("about")

        anchor = d.pop("anchor")

        claim = d.pop("claim")

        confidence = d.pop("confidence")

        flagged = d.pop("flagged")

        history = []
        _history = d.pop("history")
        for history_item_data in _history:
            history_item = BeliefStep.from_dict(history_item_data)

            history.append(history_item)

        belief_view = cls(
            about=about,
            anchor=anchor,
            claim=claim,
            confidence=confidence,
            flagged=flagged,
            history=history,
        )

        belief_view.additional_properties = d
        return belief_view

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
