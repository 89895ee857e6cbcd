"""The command ``attnlimits ridge``: the limiting test error along a γ grid."""
from __future__ import annotations


def run(params, *, progress=None):
    from .model import solve

    return solve(params["gamma"], params["lam"], params["r2"], params["sigma2"])


def export(params, path):
    from attnlimits.numeric import export_model

    from .model import model

    return f"wrote {export_model(model, path, params['backend'])}"
