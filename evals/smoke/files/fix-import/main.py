"""Greets the user. Run it with: python3 main.py"""

from helpers import greet, shout


def main():
    print(greet("rein"))
    print(shout("the import works"))


if __name__ == "__main__":
    main()
