from __future__ import annotations

from booking_core.coupons import CouponUsage


def test_usage_counts_redemptions_in_total_and_by_customer_within_the_company(uow_factory):
    with uow_factory() as uow:
        uow.coupon_redemptions.add("cmp_a", "cpn_1", "cus_1", "bkg_1")
        uow.coupon_redemptions.add("cmp_a", "cpn_1", "cus_2", "bkg_2")
        uow.coupon_redemptions.add("cmp_a", "cpn_1", "cus_1", "bkg_3")
        uow.coupon_redemptions.add("cmp_a", "cpn_2", "cus_1", "bkg_4")
        uow.coupon_redemptions.add("cmp_b", "cpn_1", "cus_1", "bkg_5")
        uow.commit()
    with uow_factory() as uow:
        assert uow.coupon_redemptions.usage("cmp_a", "cpn_1", "cus_1") == CouponUsage(3, 2)
        assert uow.coupon_redemptions.usage("cmp_a", "cpn_1", None) == CouponUsage(3, 0)
        assert uow.coupon_redemptions.usage("cmp_a", "cpn_9", "cus_1") == CouponUsage(0, 0)


def test_refile_moves_a_customers_redemptions_to_another_within_the_company(uow_factory):
    with uow_factory() as uow:
        uow.coupon_redemptions.add("cmp_a", "cpn_1", "cus_merged", "bkg_1")
        uow.coupon_redemptions.add("cmp_a", "cpn_2", "cus_merged", "bkg_1")
        uow.coupon_redemptions.add("cmp_a", "cpn_1", "cus_survivor", "bkg_2")
        uow.coupon_redemptions.add("cmp_b", "cpn_1", "cus_merged", "bkg_3")
        uow.commit()
    with uow_factory() as uow:
        assert uow.coupon_redemptions.refile("cmp_a", "cus_merged", "cus_survivor") == 2
        uow.commit()
    with uow_factory() as uow:
        assert uow.coupon_redemptions.usage("cmp_a", "cpn_1", "cus_survivor") == CouponUsage(2, 2)
        assert uow.coupon_redemptions.usage("cmp_a", "cpn_2", "cus_survivor") == CouponUsage(1, 1)
        assert uow.coupon_redemptions.usage("cmp_a", "cpn_1", "cus_merged") == CouponUsage(2, 0)
        # Another company's redemptions under the same id stay where they were.
        assert uow.coupon_redemptions.usage("cmp_b", "cpn_1", "cus_merged") == CouponUsage(1, 1)
        assert uow.coupon_redemptions.refile("cmp_a", "cus_nobody", "cus_survivor") == 0
