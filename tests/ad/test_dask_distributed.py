"""A gradient over a chunked dask array computes on a dask.distributed cluster of two
worker processes on localhost to the NumPy answer (issue 27): the lazy gradient's graph
holds only dask and NumPy work (no tracer, nothing of the AD), so it serializes."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import chainrules  # noqa: E402
from chainrules import ad  # noqa: E402

# the cluster's own chatter (ports, scratch space, slow start on a loaded machine)
pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning:distributed.*"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=50)
    client = distributed.Client(cluster, timeout="60s")
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def loss(x, w):
    xp = chainrules.array_namespace(x, w)
    return xp.mean(xp.tanh(x @ w) ** 2) + 0.1 * xp.sum(w * w)


def numpy_loss(x, w):
    return np.mean(np.tanh(x @ w) ** 2) + 0.1 * np.sum(w * w)


def test_gradient_over_chunked_dask_computes_on_a_local_cluster(client):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 5))
    w = rng.standard_normal(5)
    ref_x, ref_w = ad.grad(numpy_loss, argnums=(0, 1))(x, w)
    xd = da.from_array(x, chunks=(16, 5))
    wd = da.from_array(w, chunks=5)
    g_x, g_w = ad.grad(loss, argnums=(0, 1))(xd, wd)
    _, y_dot = ad.jvp(loss, (xd, wd), (xd, wd))
    futures = client.compute([g_x, g_w, y_dot])
    distributed.wait(futures, timeout=120)  # bounded: a hung cluster fails the test
    got_x, got_w, got_dot = client.gather(futures)
    np.testing.assert_allclose(got_x, ref_x, rtol=1e-12)
    np.testing.assert_allclose(got_w, ref_w, rtol=1e-12)
    np.testing.assert_allclose(got_dot, ad.jvp(numpy_loss, (x, w), (x, w))[1], rtol=1e-12)
    # it ran on both workers' processes, not in this one
    assert len(client.scheduler_info()["workers"]) == 2
