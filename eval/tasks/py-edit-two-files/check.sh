# Solved when both the code and the docs say 5.0.
python3 -c 'import sys; sys.path.insert(0, "."); from shop.pricing import total; assert total(10) == 15.0, total(10)' &&
grep -Eq "5(\.0)? euros" docs/shipping.md && ! grep -q "4\.5" docs/shipping.md
