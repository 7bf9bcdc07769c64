"""A small order report: the items, their subtotal and the total with tax."""

TAX_RATE = 0.2


def subtotal(items):
    """The price of every item times its quantity, added up."""
    total = 0
    for price, quantity in items:
        total += price * quantity
    return total


def with_tax(amount):
    """`amount` with the tax added, rounded to cents."""
    return round(amout * (1 + TAX_RATE), 2)


def report(items):
    """The report's lines, joined."""
    base = subtotal(items)
    lines = [f"items: {len(items)}", f"subtotal: {base}"]
    lines.append(f"total: {with_tax(base)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report([(10, 2), (5, 1)]))
