# SPDX-License-Identifier: BSD-3-Clause
"""RFC 8219 §10 overload scalability end to end: the real engine sends from n client addresses
through the kernel router (router4 with 16 addresses per side), a throughput search per n."""

import pytest
from e2e_util import summary, trials, xlatperf


def test_scalability_through_the_kernel_router(make_lab, tmp_path):
    config = make_lab("router4", addresses=16)
    out = tmp_path / "scale"
    # 40 kfps is far below what the kernel forwards here: one trial per n settles it.
    xlatperf("scalability", "-c", str(config), "--flows", "1,4,16", "--duration", "1",
             "--set", "addresses.right=fixed", "--set", "throughput.max_rate=40000",
             "--set", "throughput.error=10000", "--set", "trial.pause=0.2",
             "--set", "trial.timeout=0.5", "--out", str(out), "-q", timeout=300)
    s = summary(out)
    assert s["complete"] and s["unit"] == "%" and s["largest_flows"] == 16
    assert [f["flows"] for f in s["flows"]] == [1, 4, 16]
    assert all(f["throughput"] > 0 for f in s["flows"]), s["flows"]
    assert s["flows"][0]["degradation_percent"] == 0.0
    measured = {r["network_flows"] for r in trials(out) if r.get("phase") != "learning"}
    assert measured == {1, 4, 16}
    xlatperf("report", str(out))
    assert (out / "report" / "plots" / "scalability_1.png").exists()


def test_incremental_start_through_the_kernel_router(make_lab, tmp_path):
    """RFC 8219 §10.2.2: 4 clients started 0.25 s apart, each its own engine flow per
    direction from its own address, through router4. At 20 kfps (far below what the kernel
    forwards) every trial passes: each client sent exactly its share over its own active time,
    trial.duration + (n - 1) x t - i x t, and the DUT forwarded all of it."""
    config = make_lab("router4", addresses=4)
    out = tmp_path / "scale_incremental"
    t, duration = 0.25, 1.0
    xlatperf("scalability", "-c", str(config), "--flows", "1,4", "--duration", str(duration),
             "--set", "addresses.right=fixed", "--set", f"scalability.start_interval={t}",
             "--set", "throughput.max_rate=20000", "--set", "throughput.error=10000",
             "--set", "trial.pause=0.2", "--set", "trial.timeout=0.5", "--out", str(out), "-q",
             timeout=300)
    s = summary(out)
    assert s["complete"] and s["start_interval_s"] == t and s["largest_flows"] == 4
    assert [f["flows"] for f in s["flows"]] == [1, 4]
    records = [r for r in trials(out) if r.get("phase") != "learning"]
    four = [r for r in records if r["network_flows"] == 4]
    assert four, records
    for record in four:
        assert record["valid"], record.get("invalid_reason")
        assert record["start_interval"] == t
        assert record["duration"] == pytest.approx(duration + 3 * t)
        rate = record["rate"]
        shares = [rate // 4 + (1 if i < rate % 4 else 0) for i in range(4)]
        for name in ("forward", "reverse"):
            direction = record["directions"][name]
            clients = direction["flows"]
            assert len(clients) == 4
            for i, (client, share) in enumerate(zip(clients, shares)):
                active = duration + 3 * t - i * t
                assert client["planned"] == round(share * active), (name, i, client)
                assert client["sent"] == client["planned"], (name, i, client)
                assert client["received"] == client["sent"], (name, i, client)
            assert direction["sent"] == sum(c["sent"] for c in clients)
            assert direction["received"] == direction["sent"]
    xlatperf("report", str(out))
    assert "start interval T (s)" in (out / "report" / "report.md").read_text()
