"""tree-sitter function boundaries against lizard, the reference, and the two extraction
paths against each other on a real repository.

The sources below are small files written for these tests in the styles the three real
histories of docs/mining.md use (numpy's C and Python, a Java library, C++ with
namespaces, export macros and test macros, and a header written around macros as fmt's
are), none copied from those projects.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import lizard
import pytest

from engines.commits.boundaries import (
    Parsed,
    Starts,
    _changed_runs,
    function_spans,
    parse,
    spans_at,
    split_like,
)
from engines.commits.extract import TreeCache, changed_lines, extract_fast, hunk_ranges
from engines.commits.gitlog import iter_commit_stats
from engines.commits.gitstream import GitStreams
from engines.commits.macros import unmacro
from engines.commits.miner import Filtered, Mined, mine_repository
from engines.commits.options import MineOptions
from tests.gitrepo import GitRepo

PYTHON = '''\
import functools


@functools.cache
def top(a, b=1):
    """Docstring
    over two lines."""
    def inner(c):
        return c * 2
    return inner(a)
    # a trailing comment is not code


class Reader(Base):
    def read(self, size=-1):
        if size < 0:
            return self._all()
        return self._some(size)

    @property
    def closed(self):
        return self._closed

    def method_with_nested(self):
        def helper(x):
            return x
        return helper


async def fetch(
    url,
    timeout=None,
):
    return await get(url, timeout)
'''

JAVA = """\
package org.example.text;

import java.util.List;

public class Joiner<T> extends Base {
  private final String separator;

  public Joiner(String separator) {
    this.separator = separator;
  }

  @Override
  public <U extends T> String join(
      final List<U> parts, int... widths) throws IllegalStateException {
    StringBuilder out = new StringBuilder();
    Runnable r = new Runnable() {
      @Override
      public void run() {
        out.append(separator);
      }
    };
    parts.forEach(p -> out.append(p));
    return out.toString();
  }

  abstract void hook();

  static String repeat(String s, int n) {
    return s.repeat(n);
  }
}
"""

C = """\
#include <Python.h>

static PyObject *
array_sum(PyArrayObject *self, PyObject *NPY_UNUSED(args))
{
    if (self == NULL) {
        return NULL;
    }
    return PyLong_FromLong(0);
}

NPY_NO_EXPORT int
count_nonzero(const char *data, npy_intp n)
{
    int count = 0;
    for (npy_intp i = 0; i < n; i++) {
        count += data[i] != 0;
    }
    return count;
}

struct pair { int a; int b; };
static int (*callback)(int);

static void
cleanup(void)
{
}
"""

CPP = """\
#include <string>

namespace store {
namespace {
int Hash(const char* data, size_t n) {
  return static_cast<int>(n);
}
}  // namespace

class Cache {
 public:
  Cache() : size_(0) {}
  ~Cache() {}
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = default;

  bool operator==(const Cache& other) const { return size_ == other.size_; }

  int Size() const {
    struct Local {
      int Twice(int x) { return 2 * x; }
    };
    return Local().Twice(size_) / 2;
  }

 private:
  int size_;
};

template <typename K>
bool Table<K>::Insert(const K& key,
                      int value) {
  return key.empty() || value > 0;
}

TEST(CacheTest, Empty) {
  Cache c;
  EXPECT_EQ(c.Size(), 0);
}
}  // namespace store
"""

# A header in the style of a C++ library written around macros (fmt's): macros in
# template parameter lists, on lines of their own, after parameters and in ``if``;
# directives inside declarations; conversion operators and ref-qualified overloads.
MACRO_CPP = """\
#include <cstddef>
#if WIDGET_HAS_INCLUDE(<string_view>)
#  include <string_view>
#endif

WIDGET_BEGIN_NAMESPACE

WIDGET_PRAGMA_GCC(push_options)
namespace impl {

template <typename T, WIDGET_ENABLE_IF(std::is_integral<T>::value &&
                                      sizeof(T) > 1)>
WIDGET_CONSTEXPR auto widen(T value) -> long {
  return static_cast<long>(value);
}

template <typename Out,
          WIDGET_ENABLE_IF(is_output<Out>::value)>
#if WIDGET_CLANG
__attribute__((always_inline))
#endif
inline auto emit(Out out, char c) -> Out {
  *out++ = c;
  return out;
}

template <typename C, typename T>
constexpr auto has_render(T*)
    -> decltype(typename C::template renderer<T>().render(std::declval<T&>()),
                true) {
  return true;
}

WIDGET_TYPE_TAG(int, int_tag);
WIDGET_TYPE_TAG(char, char_tag);

template <typename Char>
class holder
#if WIDGET_OLD_COMPILER
    // a base that old compilers need
    : public holder_base<Char>
#endif
{
 public:
  WIDGET_INLINE holder(unsigned x WIDGET_EXTRA) : bits_(x) {}
  WIDGET_DEPRECATED operator const Char*() const { return name_; }
  explicit operator bool() const noexcept { return bits_ != 0; }
  auto get() & -> unsigned& { return bits_; }
  auto get() const& -> const unsigned& { return bits_; }
  auto operator()(int k) const -> int { return k + 1; }
  auto operator[](size_t i) -> Char& { return name_[i]; }
  void reset(unsigned value, unsigned mask = {}) {
    if WIDGET_CONSTEXPR20 (sizeof(unsigned) > 2) bits_ = value & ~mask;
    bits_ = (bits_ & ~mask) | (unsigned(value) << 1);
  }

 private:
  unsigned bits_;
  Char name_[8];
};

enum : unsigned long long { big_bit = 1ULL << 62 };

inline void report(const char* msg) {
  WIDGET_TRY { log(msg); }
  WIDGET_CATCH(...) {}
}
}  // namespace impl

extern template WIDGET_API auto impl::widen<int>(int) -> long;

inline auto operator""_w(const char* s, size_t n) -> impl::holder<char> {
  return impl::holder<char>(static_cast<unsigned>(n));
}
WIDGET_END_NAMESPACE
"""

SOURCES = {
    "reader.py": PYTHON,
    "Joiner.java": JAVA,
    "multiarray.c": C,
    "cache.cc": CPP,
    "widget.h": MACRO_CPP,
}


def _lizard(path: str, text: str) -> list[tuple[str, int, int]]:
    result = lizard.analyze_file.analyze_source_code(path, text)
    return sorted((f.name, f.start_line, f.end_line) for f in result.function_list)


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_tree_sitter_finds_the_functions_lizard_finds(path: str) -> None:
    text = SOURCES[path]
    spans = function_spans(path, text.encode())
    found = sorted((s.name, s.start, s.end) for s in spans)
    assert found == _lizard(path, text)
    assert len(found) >= 3


def test_names_and_lines_follow_lizard_conventions() -> None:
    by_name = {s.name: s for s in function_spans("cache.cc", CPP.encode())}
    # a local class's method is part of its function; "= delete/default" has no body
    assert "store::Cache::Size" in by_name and "store::Local::Twice" not in by_name
    assert "store::Cache::operator =" not in by_name
    assert by_name["store::Cache::operator =="].start == 17
    assert by_name["store::Table<K>::Insert"].start == 31  # the name's line, not the template's
    python = {s.name: s for s in function_spans("reader.py", PYTHON.encode())}
    assert python["top"].start == 5 and python["top"].end == 10  # no decorator, no comment
    assert "top.inner" in python and "method_with_nested.helper" in python


def test_export_macros_do_not_turn_a_class_into_a_function() -> None:
    text = b"namespace kv {\nclass KV_EXPORT Slice {\n public:\n  int size() { return n; }\n};}\n"
    assert [s.name for s in function_spans("slice.h", text)] == ["kv::Slice::size"]
    # lizard glues the macro to the class name: one of the disagreements docs/mining.md lists
    assert [
        f.name
        for f in lizard.analyze_file.analyze_source_code("slice.h", text.decode()).function_list
    ] == ["kv::KV_EXPORTSlice::size"]


def test_an_incremental_parse_finds_what_a_fresh_parse_finds() -> None:
    before = CPP.encode()
    after = before.replace(
        b"return key.empty()", b"if (value < 0) {\n    return false;\n  }\n  return key.empty()"
    )
    previous = parse("cache.cc", before)
    edited = parse("cache.cc", after, previous)
    assert previous is not None and edited is not None
    assert spans_at(edited) == function_spans("cache.cc", after)
    assert spans_at(edited, [(34, 34)]) == [
        s for s in function_spans("cache.cc", after) if s.name == "store::Table<K>::Insert"
    ]


def test_hunks_give_pydriller_line_numbers() -> None:
    diff = "@@ -3,4 +3,5 @@ def f():\n a\n-b\n+c\n+d\n e\n\\ No newline at end of file\n"
    assert changed_lines(diff) == ([4, 5], [4])
    assert hunk_ranges(diff) == ([(3, 6)], [(3, 7)])


def _history(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    fast_read = PYTHON.replace("self._all()", "self._all_fast()")
    renamed = CPP.replace("int value)", "int v)").replace("value > 0", "v > 0")
    repo.commit("add sources", SOURCES)
    repo.commit("speed up read", {"reader.py": fast_read})
    repo.commit(
        "join with a capacity",
        {"Joiner.java": JAVA.replace("new StringBuilder()", "new StringBuilder(64)")},
    )
    repo.commit("count faster", {"multiarray.c": C.replace("!= 0;", "!= 0 ? 1 : 0;")})
    repo.commit("rename Insert's argument (two signatures)", {"cache.cc": renamed})
    repo.commit("an import only", {"reader.py": "import os\n" + fast_read})
    repo.commit(
        "two functions",
        {"multiarray.c": C.replace("FromLong(0)", "FromLong(1)").replace("count = 0", "count = 1")},
    )
    repo.git("mv", "cache.cc", "lru cache.cc")
    repo.commit("move and touch", {"lru cache.cc": renamed.replace("Size(), 0)", "Size(), 0u)")})
    repo.commit("a new file", {"extra/tool.py": "def main():\n    return 0\n"})
    repo.commit("delete it", {"extra/tool.py": None})
    return repo


def test_both_extraction_paths_give_the_same_outcomes(tmp_path: Path) -> None:
    repo = _history(tmp_path)
    outcomes = {}
    for boundaries in ("tree-sitter", "lizard"):
        options = MineOptions(boundaries=boundaries)
        outcomes[boundaries] = list(mine_repository(repo.path, "repo", "main", options))
    fast, reference = outcomes["tree-sitter"], outcomes["lizard"]
    assert [type(o).__name__ for o in fast] == [type(o).__name__ for o in reference]
    for a, b in zip(fast, reference, strict=True):
        if isinstance(a, Mined) and isinstance(b, Mined):
            assert dataclasses.asdict(a.row) == dataclasses.asdict(b.row)
        else:
            assert a == b
    mined = [o.row for o in fast if isinstance(o, Mined)]
    assert [r.functions for r in mined] == [
        ["read"],
        ["Joiner::join"],
        ["count_nonzero"],
        ["store::TEST"],
        ["main"],
        ["main"],
    ]
    assert mined[3].files == ["lru cache.cc"]
    reasons = [o.reason for o in fast if not isinstance(o, Mined)]
    assert reasons == ["too-many-files", "too-many-functions", "no-function", "too-many-functions"]


def test_macro_forms_are_rewritten_into_code_tree_sitter_reads() -> None:
    text = MACRO_CPP.encode()
    rewritten = unmacro("cpp", text)
    assert len(rewritten) == len(text)
    assert [i for i, c in enumerate(rewritten) if c == 10] == [
        i for i, c in enumerate(text) if c == 10
    ]
    parsed = parse("widget.h", text)
    assert parsed is not None and not parsed.tree.root_node.has_error
    assert b"template <typename T, int " in rewritten  # WIDGET_ENABLE_IF(...) as int
    # left as written: directives, a macro argument of a call, a test macro's name
    kept = b"#ifndef WIDGET_H_\nvoid f() { g(a, WIDGET_STRING(x), b); }\nTEST(a, b)\n{\n}\n"
    assert unmacro("cpp", kept) == kept


def test_conversion_operators_and_overloads_are_named_as_lizard_names_them() -> None:
    spans = function_spans("widget.h", MACRO_CPP.encode())
    names = [s.name for s in spans]
    assert "impl::holder::operator const Char *" in names
    assert 'operator "" _w' in names
    gets = [s.long_name for s in spans if s.name == "impl::holder::get"]
    assert len(set(gets)) == 2  # get() & and get() const&: two functions, as for lizard
    holder = next(s for s in spans if s.name == "impl::holder::holder")
    assert "WIDGET_EXTRA" in holder.long_name  # parameters as written: a macro added
    # there changes the signature, as it does for lizard


def test_only_the_changed_paragraphs_are_edited() -> None:
    old = [b"a", b"b", b"c", b"d", b"e"]
    assert _changed_runs(old, old) == []
    assert _changed_runs(old, [b"a", b"B", b"c", b"d", b"E"]) == [(1, 2, 1, 2), (4, 5, 4, 5)]
    assert _changed_runs(old, [b"a", b"c", b"d", b"e", b"f"]) == [(1, 2, 1, 1), (5, 5, 4, 5)]
    assert _changed_runs(old, [b"d", b"a", b"b", b"c", b"e"]) == [(0, 0, 0, 1), (3, 4, 4, 4)]


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.replace("return true;", "return false;").replace("k + 1", "k + 2"),
        lambda t: t + "\ninline int extra() { return 1; }\n",
        lambda t: t.replace("\nWIDGET_TYPE_TAG(int, int_tag);\n", "\n").replace("c;\n", "c;\n\n"),
        lambda t: t[: t.index("inline auto operator")],
        lambda t: "// a new first line\n\n" + t.replace("bits_ != 0", "bits_ > 0"),
    ],
)
def test_an_incremental_parse_over_paragraph_edits_matches_a_fresh_one(change) -> None:  # type: ignore[no-untyped-def]
    before, after = MACRO_CPP, change(MACRO_CPP)
    previous = parse("widget.h", before.encode())
    assert previous is not None
    edited = parse("widget.h", after.encode(), previous)
    assert edited is not None
    assert spans_at(edited) == function_spans("widget.h", after.encode())


def test_a_new_version_is_cut_into_paragraphs_as_a_fresh_split_cuts_it() -> None:
    # runs of newlines are where a split that starts mid-text could cut differently
    rng = random.Random(7)
    pieces = [b"a", b"b", b"\n", b"\n", b"\n", b"x;"]
    for _ in range(20_000):
        old = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        new = bytearray(old)
        for _ in range(rng.randint(0, 3)):
            at = rng.randint(0, len(new))
            if rng.random() < 0.5:
                new[at:at] = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 3)))
            else:
                del new[at : at + rng.randint(1, 3)]
        text = bytes(new)
        previous = Parsed("c", old, None, old, old.split(b"\n\n"))
        paragraphs, head, tail, starts = split_like(previous, text)
        assert paragraphs == text.split(b"\n\n"), (old, text)
        assert paragraphs[:head] == previous.paragraphs[:head]
        assert (
            paragraphs[len(paragraphs) - tail :]
            == previous.paragraphs[len(old.split(b"\n\n")) - tail :]
        )
        fresh = Starts(paragraphs)
        assert (starts.bytes, starts.rows) == (fresh.bytes, fresh.rows), (old, text)


@pytest.mark.parametrize(("path", "source"), [("widget.h", MACRO_CPP), ("cache.cc", CPP)])
def test_chains_of_incremental_parses_give_the_trees_of_fresh_parses(
    path: str, source: str
) -> None:
    # edits narrowed to the bytes that differ: a wrong row, column or length would show
    # as a tree unlike the fresh one somewhere along the chain
    rng = random.Random(11)
    inserts = ["", "  int z = 0;", "x += 1;", "// note", "}", "{", "FMT_CONSTEXPR", "é ü"]
    for _ in range(6):
        lines = source.split("\n")
        previous = parse(path, source.encode())
        assert previous is not None and not previous.tree.root_node.has_error
        for _ in range(25):
            at = rng.randrange(len(lines))
            roll = rng.random()
            if roll < 0.3:
                del lines[at]
            elif roll < 0.6:
                lines.insert(at, rng.choice(inserts))
            elif lines[at]:
                cut = rng.randrange(len(lines[at]))
                lines[at] = lines[at][:cut] + rng.choice(["1", "ab", " ", ""]) + lines[at][cut:]
            text = "\n".join(lines).encode()
            edited = parse(path, text, previous)
            fresh = parse(path, text)
            assert edited is not None and fresh is not None
            assert _nodes(edited) == _nodes(fresh)
            previous = edited


def test_edits_that_break_the_syntax_find_what_whole_paragraphs_find() -> None:
    # where a text does not parse, error recovery depends on what tree-sitter re-reads:
    # an edit narrowed to a few bytes there could name other functions than re-reading
    # the changed paragraphs (as parses did before edits were narrowed); such runs are
    # re-read whole. Where the result parses, it is the tree of a fresh parse.
    rng = random.Random(2)
    pieces = [b"\n", b"\n\n", b"{", b"}", b";", b" x", b"FMT_API ", b"/*", b"*/", b"#if 1\n"]
    pieces += [b"#endif\n", b"int f() { return 0; }\n", b"\xc3\xa9", b"\r\n"]
    broken = 0
    for path, source in (("a.cc", CPP), ("w.h", MACRO_CPP), ("A.java", JAVA), ("m.py", PYTHON)):
        for _ in range(15):
            text = bytearray(source.encode())
            previous = parse(path, bytes(text))
            for _ in range(20):
                for _ in range(rng.randint(1, 3)):
                    at = rng.randint(0, len(text))
                    if rng.random() < 0.55:
                        text[at:at] = rng.choice(pieces)
                    else:
                        del text[at : at + rng.randint(1, 12)]
                edited, fresh = parse(path, bytes(text), previous), parse(path, bytes(text))
                whole = parse(path, bytes(text), previous, narrow=False)
                assert edited is not None and fresh is not None and whole is not None
                assert spans_at(edited) == spans_at(whole)
                if fresh.tree.root_node.has_error:
                    broken += 1
                else:
                    assert _nodes(edited) == _nodes(fresh)
                previous = edited
    assert broken > 300  # the edits did break the syntax, often


def _nodes(parsed: Parsed) -> list[tuple[str, int, int, tuple[int, int], tuple[int, int]]]:
    """Every node of the tree, with where it lies in bytes and in rows and columns."""
    found = []
    stack = [parsed.tree.root_node]
    while stack:
        node = stack.pop()
        found.append((node.type, node.start_byte, node.end_byte, node.start_point, node.end_point))
        stack.extend(reversed(node.children))
    return found


def test_more_macro_forms_and_grammar_gaps_read_without_errors() -> None:
    text = b"""\
#if FMT_HAS_INCLUDE(<version>)
#  include <version>
#endif

template <typename Allocator> class sized : public Allocator {
 public:
  using typename Allocator::value_type;
  value_type* get() { return nullptr; }
};

auto message = WIDGET_FLAG
                   ? "one"
                   : "other";

void check(int x) {
  for (int i = 0; i < x; ++i) {
    EXPECT_EQ(f(i), g(i))
        << "at " << i;
  }
}
"""
    parsed = parse("t.cc", text)
    assert parsed is not None and not parsed.tree.root_node.has_error
    assert b"using          Allocator::value_type;" in parsed.source
    assert b"FMT_HAS_INCLUDE( version )" in parsed.source
    assert [(s.name, s.start, s.end) for s in spans_at(parsed)] == [
        ("sized::get", 8, 8),
        ("check", 15, 20),
    ]


def test_macros_after_a_parameter_list_are_read_as_nothing() -> None:
    # older headers put their noexcept and override behind macros, and a macro before
    # ``const`` and a type was left as it was: a syntax error each, which also made
    # tree-sitter re-parse far more of the file at every version
    text = b"""\
class store_buffer : public base_buffer {
 public:
  store_buffer(size_t n) WIDGET_NOEXCEPT : size_(n) {}
  ~store_buffer() WIDGET_NOEXCEPT WIDGET_OVERRIDE;
  size_t size() const WIDGET_NOEXCEPT { return size_; }
  void grow(size_t n) WIDGET_OVERRIDE;
  store_buffer& operator=(store_buffer&& other) WIDGET_NOEXCEPT {
    size_ = other.size_;
    return *this;
  }

 private:
  size_t size_;
};

#define WIDGET_CHECK(x) WIDGET_NOEXCEPT {

WIDGET_CONSTEXPR const char* skip(const char* p) { return p + 1; }
"""
    parsed = parse("buffer.h", text)
    assert parsed is not None and not parsed.tree.root_node.has_error
    assert b"~store_buffer()                                ;" in parsed.source
    assert b"#define WIDGET_CHECK(x) WIDGET_NOEXCEPT {" in parsed.source  # a directive
    assert [(s.name, s.start, s.end) for s in spans_at(parsed)] == [
        ("store_buffer::store_buffer", 3, 3),
        ("store_buffer::size", 5, 5),
        ("store_buffer::operator =", 7, 10),
        ("skip", 18, 18),
    ]
    found = lizard.analyze_file.analyze_source_code("buffer.h", text.decode()).function_list
    # lizard agrees but for the constructor, which it names after the member its
    # initializer list sets (the macro hides where the parameter list ends)
    assert [f.name for f in found] == [
        "store_buffer::size_",
        "store_buffer::size",
        "store_buffer::operator =",
        "skip",
    ]


def test_aliases_upper_case_names_and_commented_definitions_read_without_errors() -> None:
    text = b"""\
#define WIDGET_ASSERT(cond, msg)                        \\
  ((cond) /* void() fails on some compilers */         \\
       ? (void)0                                        \\
       : widget::fail(__FILE__, __LINE__, (msg)))

template <typename T>
using old_view WIDGET_DEPRECATED_ALIAS = view<T>;

template <bool IS_CONSTEXPR, typename T> bool find(T value) { return IS_CONSTEXPR; }

class sink : public base {
  void grow(size_t n) final WIDGET_OVERRIDE;
};
"""
    parsed = parse("sink.h", text)
    assert parsed is not None and not parsed.tree.root_node.has_error
    assert b"((cond)                                     " in parsed.source
    assert b"template <bool IS_CONSTEXPR, typename T>" in parsed.source  # a name, kept
    assert [(s.name, s.start, s.end) for s in spans_at(parsed)] == [("find", 9, 9)]


def test_dependent_names_comparisons_and_directives_in_declarations_read_without_errors() -> None:
    # constructs of real C++ headers that tree-sitter's grammar misses; each was a
    # syntax error that made every later version of the file slow to re-parse
    text = b"""\
template <typename T, typename Ptr = const T*>
WIDGET_CONSTEXPR auto find(Ptr first, T value) -> bool {
  using wide = pick_t<sizeof(T) >= sizeof(long), long, int>;
  const uint8_t WIDGET_ALIGNED(16) data[4] = {1, 2, 3, 4};
  return first != nullptr;
}

template <typename Context> auto visit(const arg<Context>& a) -> int {
  auto parser = typename Context::template parser_type<int>();
  auto ctx = typename Context::parse_context({});
  return run(typename arg<Context>::handle(a.custom), parser, ctx);
}

struct widget {
  explicit widget(string_view sep = "", std::initializer_list<char> g = {3},
                  locale_ref loc = {});
  using value_type =
#ifdef __cpp_lib_ranges
      std::iter_value_t<It>;
#else
      typename std::iterator_traits<It>::value_type;
#endif
  template <typename T>
  auto map(const T& v) -> decltype(WIDGET_THIS map(v.value)) { return map(v.value); }
};

template <typename T, typename Char>
#if WIDGET_OLD_CLANG
struct unformattable {};
#else
struct unformattable;
#endif

template <typename, typename Out> void write(Out, widget) = delete;
template <typename Ptr = const char*> auto first(Ptr p) -> char { return *p; }
inline auto local_time WIDGET_NOMACRO(...) -> none { return none(); }
TEST(widget_test, enum) { EXPECT_EQ(1, 1); }
bool operator >=(widget a, widget b) { return a.n >>= 1; }
"""
    parsed = parse("widget.h", text)
    assert parsed is not None and not parsed.tree.root_node.has_error
    assert len(parsed.source) == len(text) and parsed.source.count(b"\n") == text.count(b"\n")
    assert b"bool operator >=(" in parsed.source and b">>= 1" in parsed.source
    assert b"      typename std::iterator_traits" not in parsed.source  # the second branch
    assert [s.name for s in spans_at(parsed)] == [
        "find",
        "visit",
        "widget::map",
        "first",
        "local_time",
        "TEST",
        "operator >=",
    ]
    # where a type stands, ``typename`` and a template parameter stay as written
    kept = b"template <typename T, typename U::type N> void f(typename U::type x) {}\n"
    assert unmacro("cpp", kept) == kept
    # a name in capitals after a type is a function, not a macro to read as nothing
    named = b"static uint32_t CRC_32(const char* p) { return 0; }\n"
    assert unmacro("cpp", named) == named


def test_statement_macros_without_semicolons_do_not_stretch_a_function() -> None:
    text = """\
static int
compare(int x, int y, int op)
{
    int result = 0;
    CHECK_ARGS(x, y);
#define OP(code, name) case code: result = name(x, y); break;
    switch (op) {
        OP(LESS, lt)
        OP(EQUAL, eq)
    }
#undef OP
    return result;
}

static int table[] = {1, 2, 3};

static int
first(void)
{
    return table[0];
}
"""
    found = sorted((s.name, s.start, s.end) for s in function_spans("cmp.c", text.encode()))
    assert found == _lizard("cmp.c", text)
    assert ("compare", 2, 13) in found


def test_a_side_that_changes_too_many_functions_spares_the_parse_of_the_other(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    two = "def f(x):\n    return x\n\n\ndef g(x):\n    return x\n"
    repo.commit("add", {"a.py": two, "notes.txt": "-"})  # two files: a.py is never parsed
    both = two.replace("return x", "x += 1\n    return x")
    repo.commit("touch f and g (added lines only)", {"a.py": both})
    one = both.replace("def g(x):\n    x += 1\n", "def g(x):\n")
    repo.commit("notes", {"a.py": one, "notes.txt": "--"})
    repo.commit("touch g again", {"a.py": one.replace("def g(x):\n", "def g(x):\n    x -= 1\n")})
    stats = [s for s in iter_commit_stats(repo.path, "main", None, None, None, None)]
    git, cache, options = GitStreams(repo.path), TreeCache(), MineOptions()
    try:
        overflow = extract_fast(git, cache, "repo", "main", stats[1], options)
        assert overflow == Filtered(stats[1].sha, "too-many-functions")
        assert cache.misses == 1  # the version after: the one before was never read
        kept = extract_fast(git, cache, "repo", "main", stats[3], options)
        assert isinstance(kept, Mined) and kept.row.functions == ["g"]
        assert "x -= 1" in kept.row.code_after and "x -= 1" not in kept.row.code_before
        assert cache.misses == 3  # both versions of a.py, after first, then before
    finally:
        git.close()


def test_the_last_version_of_each_path_is_kept_up_to_a_budget_of_text() -> None:
    cache = TreeCache(latest_bytes=100)
    text = b"def f(x):\n    return x\n" * 2  # 48 bytes
    for oid, path in (("1", "a.py"), ("2", "b.py"), ("3", "a.py"), ("4", "c.py")):
        cache.get(oid, path, lambda: text)
    assert list(cache._latest) == ["a.py", "c.py"]  # b.py was the oldest past 100 bytes
    assert cache._latest_size == 2 * len(text)
    huge = TreeCache(latest_bytes=10)
    huge.get("5", "d.py", lambda: text)
    assert list(huge._latest) == ["d.py"]  # one file over the budget is still kept
