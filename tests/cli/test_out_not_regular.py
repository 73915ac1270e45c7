"""An ``--out`` naming a FIFO or a device node is refused in one line and left as it was: an output
is a regular file or absent, never a special file replaced by one."""

from __future__ import annotations

import os
import stat

from langrag_eval.cli import main


def test_out_naming_a_fifo_or_a_device_is_refused(tmp_path, capsys) -> None:  # noqa: ANN001
    qa = tmp_path / "qa.csv"
    qa.write_text("id,question,answer,label\nq1,Q?,A,L\n", encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text('["Score: [[4]], Reason: [[fine]]"]', encoding="utf-8")
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    for out in (str(fifo), os.devnull):
        code = main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(tmp_path / "s.sqlite"),
                     "--out", out])
        err = capsys.readouterr().err
        assert code == 2 and "not a regular file" in err and "Traceback" not in err, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat(os.devnull).st_mode)
