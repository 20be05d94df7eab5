"""What a session's tokens cost: a built-in price table for common models (`table`), the
person's own prices in `$MURMUR_HOME/tui/prices.yaml` (`override`), and the arithmetic —
exact, in `Decimal` dollars — with the one way an amount is shown (`ledger`). A model with no
price shows its tokens only: a cost is never guessed. See docs/cost.md."""

from tui.core.cost.ledger import Ledger, Spend, money
from tui.core.cost.override import PRICES_FILE, load_prices, prices_file
from tui.core.cost.table import BUILTIN, Price, PriceTable

__all__ = ["BUILTIN", "PRICES_FILE", "Ledger", "Price", "PriceTable", "Spend", "load_prices",
           "money", "prices_file"]
