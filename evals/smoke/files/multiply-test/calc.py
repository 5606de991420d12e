def multiply(a, b):
    """The product of a and b."""
    return a * b
