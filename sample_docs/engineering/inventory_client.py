"""Client for the Northwind warehouse inventory service.

The inventory service tracks spare parts for cleaning robots. Every part has a SKU such as
NW-BRUSH-220 (main brush) or NW-FILTER-HEPA3 (HEPA filter).
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass

DEFAULT_TIMEOUT_S = 5.0
LOW_STOCK_THRESHOLD = 25


@dataclass(frozen=True)
class StockLevel:
    """Units of one SKU available in one warehouse."""

    sku: str
    warehouse: str
    units: int

    @property
    def is_low(self) -> bool:
        """True when stock fell below the reorder threshold."""
        return self.units < LOW_STOCK_THRESHOLD


class InventoryClient:
    """Reads stock levels and reserves parts for repair orders."""

    def __init__(self, base_url: str, token: str, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.timeout_s = timeout_s

    def _get(self, path: str) -> dict:
        request = urllib.request.Request(
            f"{self.base_url}{path}", headers={"Authorization": f"Bearer {self._token}"}
        )
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read())

    def stock(self, sku: str) -> list[StockLevel]:
        """Stock of ``sku`` in every warehouse."""
        payload = self._get(f"/v2/stock/{sku}")
        return [StockLevel(sku, row["warehouse"], int(row["units"])) for row in payload["levels"]]

    def reserve(self, sku: str, units: int, repair_order: str) -> str:
        """Reserve ``units`` of ``sku`` for a repair order; returns the reservation id.

        Raises ValueError when fewer units are available than requested.
        """
        available = sum(level.units for level in self.stock(sku))
        if available < units:
            raise ValueError(f"only {available} units of {sku} available for {repair_order}")
        payload = self._get(f"/v2/reserve/{sku}?units={units}&order={repair_order}")
        return payload["reservation_id"]


def low_stock_report(client: InventoryClient, skus: list[str]) -> list[StockLevel]:
    """Every (SKU, warehouse) pair whose stock is below the reorder threshold."""
    return [level for sku in skus for level in client.stock(sku) if level.is_low]
