# SPDX-License-Identifier: BSD-3-Clause
"""RFC 8219 §10 overload scalability end to end: the real engine sends from n client addresses
through the kernel router (router4 with 16 addresses per side), a throughput search per n."""

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
