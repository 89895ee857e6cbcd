"""Output files: checked before work, written atomically."""
from __future__ import annotations

import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.outputs import check_output_file, save_figure, write_text


def test_bad_paths_are_refused_before_work(tmp_path):
    for bad, msg in (("/proc/x.png", "cannot write in /proc"), (str(tmp_path / "no" / "x.png"), "does not exist"),
                     ("curve.txt", "must end in .png"), ("", "must name a file"), (str(tmp_path), "must end in")):
        with pytest.raises(InputError, match=msg):
            check_output_file(bad)
    assert check_output_file(tmp_path / "ok.png") == tmp_path / "ok.png"
    assert not list(tmp_path.glob(".tmp-*"))


def test_a_failing_write_leaves_the_previous_file(tmp_path):
    from matplotlib.figure import Figure

    target = tmp_path / "fig.png"
    fig = Figure()
    fig.subplots().plot([0, 1], [1, 0])
    save_figure(fig, target)
    good = target.read_bytes()

    class Broken:
        def savefig(self, path, **kw):
            with open(path, "wb") as fh:
                fh.write(b"half a png")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        save_figure(Broken(), target)
    assert target.read_bytes() == good and not list(tmp_path.glob(".tmp-*"))
    write_text(tmp_path / "a.txt", "one")
    assert (tmp_path / "a.txt").read_text() == "one"
