"""One eval over the rows of a CSV file, checking plain code (no adapter call): each row is a
case, named by its "id" column; `types=` turns the numeric columns into numbers."""

from examples.datasets._shop import order_total
from niceeval_cli import define_eval
from niceeval_cli.datasets import load_csv
from niceeval_cli.expect import equals


@define_eval(
    description="Order totals after coupons",
    tags=["datasets"],
    cases=load_csv("orders.csv", types={"quantity": int, "total": float}),
)
def order(t, case):
    total = order_total(case["item"], case["quantity"], case["coupon"])
    t.check(total, equals(case["total"])).label("Total after the coupon")
