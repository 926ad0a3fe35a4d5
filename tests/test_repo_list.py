"""Repository lists (``--repos-file``): reading, bad lines, and the star and language
filters, as a user writes the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.commits.languages import parse_languages
from engines.commits.repo_list import RepoListError, read_repo_list, select


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lists" / "repos.csv"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def test_a_headed_list_in_any_column_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "language,stargazers_count,url\n"
        "Python,1200,https://github.com/a/one\n"
        "\n"
        "# a comment line\n"
        'C++,"3,400",git@github.com:b/two.git\n'
        "Java,,../repos/three\n",
    )
    listing = read_repo_list(path)
    assert listing.problems == []
    assert [(e.spec, e.stars, e.language, e.line) for e in listing.entries] == [
        ("https://github.com/a/one", 1200, "Python", 2),
        ("git@github.com:b/two.git", 3400, "C++", 5),
        (str((tmp_path / "repos" / "three").resolve()), None, "Java", 6),
    ]


def test_without_a_header_the_columns_are_repo_stars_language(tmp_path: Path) -> None:
    listing = read_repo_list(write(tmp_path, "file:///srv/a,5,python\n/abs/b\n"))
    assert [(e.spec, e.stars, e.language) for e in listing.entries] == [
        ("file:///srv/a", 5, "python"),
        ("/abs/b", None, None),
    ]


def test_bad_lines_are_named_and_skipped_and_the_rest_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "repo,stars,language\n"
        "https://x.org/a,many,Python\n"
        ",10,Python\n"
        "https://x.org/b,-3,Python\n"
        "https://x.org/c,7,Python\n"
        "https://x.org/c,9,Python\n",
    )
    listing = read_repo_list(path)
    assert [e.spec for e in listing.entries] == ["https://x.org/c"]
    assert listing.problems == [
        f"{path}:2: stars 'many' is not a whole number",
        f"{path}:3: no repository URL or path",
        f"{path}:4: stars -3 is negative",
        f"{path}:6: https://x.org/c is listed again (line 5)",
    ]


def test_a_missing_file_or_a_header_without_a_repo_column_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RepoListError, match="no such file"):
        read_repo_list(tmp_path / "nope.csv")
    with pytest.raises(RepoListError, match=r"repos\.csv:1: the header names no repo"):
        read_repo_list(write(tmp_path, "stars,language\n3,Python\n"))


def test_stars_and_language_choose_the_repositories(tmp_path: Path) -> None:
    listing = read_repo_list(
        write(
            tmp_path,
            "repo,stars,language\n"
            "https://x.org/py-big,100,Python\n"
            "https://x.org/py-small,3,Python\n"
            "https://x.org/cpp,50,C++\n"
            "https://x.org/rust,80,Rust\n"
            "https://x.org/unknown-lang,60,\n"
            "https://x.org/unknown-stars,,Python\n",
        )
    )
    chosen = select(listing.entries, 20, parse_languages("python,cpp"))
    assert [e.spec.rsplit("/", 1)[1] for e in chosen.chosen] == [
        "py-big",
        "cpp",
        "unknown-lang",
    ]
    assert chosen.dropped == {"stars": 2, "language": 1}
    only_python = select(listing.entries, None, parse_languages("python"))
    assert [e.spec.rsplit("/", 1)[1] for e in only_python.chosen] == [
        "py-big",
        "py-small",
        "unknown-lang",
        "unknown-stars",
    ]


def test_a_list_that_chooses_nothing_says_so_rather_than_blaming_an_earlier_run(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    listing = tmp_path / "repos.csv"
    listing.write_text("repo,stars,language\nsome/where,3,Python\n")
    result = cli("mine", "commits", "--repos-file", str(listing), "--min-stars", "1000")
    assert result.exit_code == 0, result.output
    assert "nothing to mine: no repository was chosen" in result.stdout
    assert "finished by an earlier run" not in result.stdout


def test_the_diff_size_limit_is_reported_in_the_option_s_megabytes() -> None:
    from engines.commits.filters import diff_bytes_verdict
    from engines.commits.options import MineOptions

    options = MineOptions(max_diff_bytes=int(5.0 * 2**20))
    assert diff_bytes_verdict("abc", "x" * (5 * 2**20), options) is None
    rejected = diff_bytes_verdict("abc", "x" * (6 * 2**20), options)
    assert rejected is not None and rejected.reason == "diff-too-large"
    assert rejected.message == "diff is 6.0 MB, over the limit of 5.0 MB"


def test_a_byte_that_is_not_utf8_costs_its_line_only(tmp_path: Path) -> None:
    listing = tmp_path / "repos.csv"
    listing.write_bytes(b"repo,stars,language\nr\xff1,1,Python\nr2,5,Python\n")
    found = read_repo_list(listing)
    assert [(e.spec, e.stars) for e in found.entries] == [(str(tmp_path / "r2"), 5)]
    assert found.problems == [f"{listing}:2: not UTF-8 text; line skipped"]


def test_a_nul_or_a_stray_carriage_return_costs_its_line_only(tmp_path: Path) -> None:
    path = tmp_path / "repos.csv"
    path.write_bytes(
        b"repo,stars\r\nhttps://e.org/a/one,5\r\nhttps://e.org/a/t\x00wo,3\n"
        b"https://e.org/a/three\r,4\nhttps://e.org/a/four,1\n"
    )
    # was: "unexpected Error: new-line character seen in unquoted field", and with the
    # NUL alone "unexpected ValueError: embedded null byte", for the whole list
    listing = read_repo_list(path)
    specs = [e.spec for e in listing.entries]
    assert specs == ["https://e.org/a/one", "https://e.org/a/three", "https://e.org/a/four"]
    assert f"{path}:3: holds a NUL character; line skipped" in listing.problems


def test_a_file_with_no_line_naming_a_repository_is_no_list(tmp_path: Path) -> None:
    path = tmp_path / "repos.csv"
    path.write_bytes(bytes(range(256)) * 4)  # a binary file given by mistake
    with pytest.raises(RepoListError, match=r"not a CSV list of repositories: no line names"):
        read_repo_list(path)


def test_a_stray_quote_costs_its_line_only(tmp_path: Path) -> None:
    """Read as one CSV file, an opening quote swallowed every line after it into one
    field: '1 repository listed', and the good ones were never mined."""
    path = tmp_path / "repos.csv"
    path.write_text(
        'repo,stars,language\n"https://e.org/a/one,500,Java\n'
        "https://e.org/a/two,10,Python\nhttps://e.org/a/three,3,Python\n"
    )
    listing = read_repo_list(path)
    assert [e.spec for e in listing.entries] == ["https://e.org/a/two", "https://e.org/a/three"]
    assert len(listing.problems) == 1 and listing.problems[0].startswith(f"{path}:2: ")
    assert "stray quote" in listing.problems[0]
