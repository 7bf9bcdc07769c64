SHIPPING_RATE = 4.5


def total(subtotal: float) -> float:
    """The order total with shipping."""
    return round(subtotal + SHIPPING_RATE, 2)
