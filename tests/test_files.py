"""grader/files.py: the grader's files are written where it means, never through someone's link."""

import json
import os
import stat

import pytest

from grader import files

AS_ROOT = os.geteuid() == 0


@pytest.fixture
def shared(tmp_path):
    """A folder like /tmp: anyone may create names in it."""
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    return folder


def test_a_file_is_written_private_and_whole(tmp_path):
    path = files.write_json(tmp_path / "out" / "results.json", {"score": 1, "text": "分数\ud800"})
    assert json.loads(path.read_text(encoding="utf-8"))["text"] == "分数?"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o700
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["results.json"]  # no scratch left


def test_a_planted_link_is_replaced_not_followed(shared, tmp_path):
    victim = tmp_path / "rubric.toml"
    victim.write_text("points = 40\n")
    for name in ("results.json", "results.json.tmp", "results.pytest.json"):
        (shared / name).symlink_to(victim)
    files.write_private(shared / "results.json", "{}")
    files.write_private(shared / "results.pytest.json", "{}")
    assert victim.read_text() == "points = 40\n"
    assert not (shared / "results.json").is_symlink()
    assert (shared / "results.json").read_text() == "{}"


def test_a_planted_folder_is_moved_aside(shared):
    (shared / "results.json").mkdir()
    files.write_private(shared / "results.json", "{}")
    assert (shared / "results.json").read_text() == "{}"
    assert [p.name.startswith("results.json.in-the-way-") for p in shared.iterdir() if p.is_dir()] == [True]


@pytest.mark.skipif(not AS_ROOT, reason="needs a second user to own the link")
def test_a_path_through_another_users_link_is_refused(shared, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = shared / "out"
    link.symlink_to(target)
    os.lchown(link, 12345, 12345)
    with pytest.raises(files.UnsafePath):
        files.write_private(link / "results.json", "{}")
    assert not list(target.iterdir())


@pytest.mark.skipif(not AS_ROOT, reason="needs a second user to own the folder")
def test_a_folder_another_user_may_change_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 12345, 12345)
    os.chmod(theirs, 0o777)
    with pytest.raises(files.UnsafePath):
        files.write_private(theirs / "results.json", "{}")


def test_reading_back_refuses_links_and_files_others_may_write(tmp_path):
    mine = files.write_private(tmp_path / "mine.json", "{}")
    assert files.read_own(mine) == "{}"
    link = tmp_path / "link.json"
    link.symlink_to(mine)
    assert files.read_own(link) is None
    open_to_all = tmp_path / "open.json"
    open_to_all.write_text("{}")
    os.chmod(open_to_all, 0o666)
    assert files.read_own(open_to_all) is None
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert files.read_own(fifo) is None  # and it did not block
