"""The measuring commands refuse a set they cannot read (issue 41): a set named on the command line whose
directory is not there would otherwise count as a set with no bodies, and its figures would silently drop
out of every total (two sets sharing one archive, ``--notmuch-lkml`` and ``--assembl-thread``, did)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import measure_machine_mail
import measure_new_text


def test_the_text_measure_names_a_set_whose_directory_is_missing(tmp_path, monkeypatch, capsys):
    missing = tmp_path / "notmuch-lkml"
    monkeypatch.setattr(sys, "argv", ["measure_new_text.py", "--notmuch-lkml", str(missing)])
    with pytest.raises(SystemExit) as exited:
        measure_new_text.main()
    assert exited.value.code == 2
    assert f"--notmuch-lkml {missing}: no such directory" in capsys.readouterr().err


def test_the_machine_measure_names_a_set_whose_directory_is_missing(tmp_path, capsys):
    missing = tmp_path / "lamson"
    with pytest.raises(SystemExit) as exited:
        measure_machine_mail.main(["--lamson", str(missing)])
    assert exited.value.code == 2
    assert f"--lamson {missing}: no such directory" in capsys.readouterr().err
