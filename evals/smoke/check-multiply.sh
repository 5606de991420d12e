# The test must exist, pass on the real multiply, and catch a broken one.
set -e
test -f test_calc.py
grep -q multiply test_calc.py
python3 -m unittest test_calc
broken=$(mktemp -d)
cp test_calc.py "$broken/"
printf 'def multiply(a, b):\n    return a + b\n' > "$broken/calc.py"
if (cd "$broken" && python3 -m unittest test_calc >/dev/null 2>&1); then
  echo "the test passes with a broken multiply" >&2
  exit 1
fi
