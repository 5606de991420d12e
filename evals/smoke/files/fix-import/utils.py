"""Small text helpers used by main.py."""


def greet(name):
    return f"Hello, {name}!"


def shout(text):
    return text.upper() + "!"
