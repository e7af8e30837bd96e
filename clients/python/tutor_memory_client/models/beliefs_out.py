from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.beliefs_out_checks import BeliefsOutChecks
    from ..models.beliefs_out_current_item import BeliefsOutCurrentItem


T = TypeVar("T", bound="BeliefsOut")


@_attrs_define
class BeliefsOut:
    """
    Attributes:
        checks (BeliefsOutChecks): Honest check counts.
        current (list[BeliefsOutCurrentItem]): Current beliefs, each with its history (oldest row first).
    """

    checks: BeliefsOutChecks
    current: list[BeliefsOutCurrentItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checks = self.checks.to_dict()

        current = []
        for current_item_data in self.current:
            current_item = current_item_data.to_dict()
            current.append(current_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "checks": checks,
                "current": current,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.beliefs_out_checks import BeliefsOutChecks
        from ..models.beliefs_out_current_item import BeliefsOutCurrentItem

        d = dict(src_dict)
        checks = BeliefsOutChecks.from_dict(d.pop("checks"))

        current = []
        _current = d.pop("current")
        for current_item_data in _current:
            current_item = BeliefsOutCurrentItem.from_dict(current_item_data)

            current.append(current_item)

        beliefs_out = cls(
            checks=checks,
            current=current,
        )

        beliefs_out.additional_properties = d
        return beliefs_out

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
