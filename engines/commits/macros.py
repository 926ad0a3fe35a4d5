"""C and C++ text rewritten so that tree-sitter can read it: macros and grammar gaps.

tree-sitter cannot expand macros, and C and C++ libraries put upper-case macros where
the grammar expects none (``FMT_CONSTEXPR auto f()``, ``template <typename T,
FMT_ENABLE_IF(cond)>``); its C++ grammar also misses a few constructs (``extern
template``, ``unsigned(x)``). :func:`unmacro` rewrites them, always into text of the same
length with the same line breaks, so that lines and offsets stay those of the file.
docs/mining.md lists the forms.
"""

from __future__ import annotations

import re
import threading

_local = threading.local()  # each thread's cache of rewritten paragraphs

# A macro is an upper-case name with an underscore (``FMT_CONSTEXPR``, ``NPY_NO_EXPORT``);
# lizard, which reads tokens, skips the same macros.
_MACRO = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*"
_ARGS = rb"\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\)"  # balanced, 4 deep
_INCLUDE_FORM = rb"\((?:<[\w./+-]+>|\"[\w./+-]+\")\)"  # ``(<bit>)``, ``("bit.h")``
_NOT_AFTER = rb"(?<![\w#.>:])(?<!define )(?<!= )"  # ``x = FMT_FLAG\n ? a : b`` is a value
_NEXT_NAME = rb"(?=[ \t]+[A-Za-z_~]|[ \t]*\n[ \t]*[A-Za-z_~])"
# a line of its own: not ``TEST(a, b)\n{``, nor ``EXPECT_EQ(a, b)\n    << why`` (a stream)
_OWN_LINE = rb"(?=[ \t]*(?://[^\n]*)?(?:\n(?![ \t]*(?:[{:(]|<<))|\Z))"
# what follows a function's parameter list: a macro before it is not a specifier (but
# ``const`` followed by a type, ``FMT_CONSTEXPR const Char* f(``, is one)
_QUALIFIER = (
    rb"(?![ \t]+(?:const(?![ \t]+[A-Za-z_])|noexcept|override|final|throw|requires|volatile|try)\b)"
)
_COMMON = (
    # ``#if X`` / ``__attribute__((...))`` / ``#endif`` between a template's head and its
    # function, or around a base class: tree-sitter takes no directive inside a
    # declaration, so a group of one to three lines without a statement, a brace or a
    # directive (so without ``#else``) is read as if its condition held
    rb"(?P<group>#[ \t]*if[^\n]*(?<!\\)\n"
    rb"(?:[^\n#;{}]*\n){1,3}[ \t]*#[ \t]*endif\b[^\n]*)"
    # a macro defined over several lines: tree-sitter takes a ``/* comment */`` before a
    # line's closing backslash for the end of the definition; the comments are blanked
    rb"|(?P<define>#[ \t]*define\b[^\n]*\\\n(?:[^\n]*\\\n)*[^\n]*)"
    # ``if FMT_CONSTEXPR20 (cond)``
    rb"|(?<=\bif )(?P<cond>" + _MACRO + rb")(?=[ \t]*\()"
    # a macro call as a statement of its own (``FMT_TYPE_CONSTANT(int, int_type);``,
    # ``EXPECT_THROW_MSG(throw error(), error, "");``): read as an empty statement
    rb"|(?P<stmt>" + _MACRO + _ARGS + rb"[ \t]*;)(?=[ \t]*(?://[^\n]*)?$)"
    # ``FMT_CONSTEXPR auto f()``, ``FMT_MSC_WARNING(suppress : 4566) constexpr``,
    # ``FMT_BEGIN_NAMESPACE`` or ``FMT_PRAGMA_GCC(optimize("Os"))`` on a line of its own
    rb"|(?P<attr>" + _NOT_AFTER + _MACRO + rb"(?:" + _ARGS + rb")?)"
    rb"(?:" + _NEXT_NAME + _QUALIFIER + rb"|" + _OWN_LINE + rb")"
    # ``OP(Py_LT, lt)`` on a line of its own (no semicolon): a macro expanding to a
    # statement, as in a switch built by a local ``#define OP``
    rb"|(?P<call>(?<![\w#.>:])[A-Z][A-Z0-9]*"
    + _ARGS
    + rb")"
    + _OWN_LINE
    # ``value(const T& x FMT_BUILTIN)``
    + rb"|(?<=\w[ \t])(?P<trailing>"
    + _MACRO
    + rb")(?=[ \t]*(?:[),]|=(?!=)))"
)
_MACROS = {
    # every form starts with one of these characters: the engine tries the forms only
    # where one stands (most bytes of a file are lower-case letters and spaces)
    "c": re.compile(rb"(?=[A-Z#])(?:" + _COMMON + rb")", re.MULTILINE),
    "cpp": re.compile(
        # one character class first (cheap where it fails, at most bytes), then where
        # exactly a form can start
        rb"(?=[A-Z#deu<,=()>t])"
        rb"(?=[A-Z#]|\b[deu]|[<,][ \t\n]*[A-Z]|=[ \t]*\{|\([<\"]|\)[ \t]|>= "
        rb"|typename\b(?<=[(=,{ <]typename))(?:"
        # ``size_t size() const FMT_NOEXCEPT {``, ``~error() FMT_OVERRIDE;``: a macro after
        # a parameter list, where the grammar takes only its own words; the macro blanked
        rb"(?P<after>\)[ \t]+(?:(?:const|volatile|&&?|final|override|noexcept)[ \t]+)*"
        + _MACRO
        + rb"(?:[ \t]+"
        + _MACRO
        + rb")*)"
        rb"(?=[ \t]*(?:[{;:=]|->|$|(?:override|final|noexcept|const)\b))"
        rb"|"
        # ``template <typename T, FMT_ENABLE_IF(cond)>``: a parameter of its own, read
        # as ``int`` (an unnamed non-type parameter), the arguments blanked
        rb"(?P<param>[<,][ \t\n]*" + _MACRO + rb"[ \t]*" + _ARGS + rb")(?=[ \t\n]*[>,])"
        # ``class LEVELDB_EXPORT Slice {``: tree-sitter would read the class as a function
        rb"|(?<=class )(?P<export>" + _MACRO + rb"(?:\([^()\n]*\))?)"
        rb"(?=\s+[A-Za-z_]\w*\s*(?:final\s*)?[:{])"
        rb"|(?<=struct )(?P<export2>" + _MACRO + rb"(?:\([^()\n]*\))?)"
        rb"(?=\s+[A-Za-z_]\w*\s*(?:final\s*)?[:{])"
        # ``FMT_TRY { ... } FMT_CATCH(...) { ... }``
        rb"|(?P<try>\b[A-Z][A-Z0-9]*_TRY)(?=[ \t]*\{)"
        rb"|(?P<catch>\b[A-Z][A-Z0-9]*_CATCH)(?=[ \t]*\()"
        # two gaps of the grammar itself: ``unsigned(x)`` (read as a call of
        # ``Unsigned``) and an unnamed enum with a base (``enum : ullong {``, named ``_``)
        rb"|(?P<cast>\bunsigned)(?=\()"
        rb"|(?P<enum>\benum : )(?=\w)"
        # more gaps: ``extern template`` (read as ``template``) and
        # ``FMT_HAS_INCLUDE(<bit>)`` or ``("bit.h")`` in a directive (read as ``( bit_h )``)
        rb"|(?P<extern>\bextern)(?=[ \t]+template\b)"
        # ``using typename Base::value_type;`` (read as ``using Base::value_type;``)
        rb"|(?P<using>\busing[ \t]+typename)(?=[ \t]+\w)"
        # a braced default argument (``locale_ref loc = {}``, ``list<char> g = {3}``),
        # which the grammar does not take: read as ``= 0`` and ``= (3)``
        rb"|(?P<braced>=[ \t]*\{[^{}()\n;]*\})(?=[ \t]*[,)])"
        # ``conditional_t<sizeof(T) >= 8, ...>``, ``enable_if_t<N >= 2>``: the grammar
        # ends the template arguments at ``>``; read as ``N  - 2`` (any ``>=`` between a
        # name or ``)`` and a space: the expression it stands in stays an expression)
        rb"|(?<=[\w)] )(?<!operator )(?P<ge>>=)(?= )"
        # ``vis(typename arg<C>::handle(v))``, ``= typename C::template f<T>()``: a
        # dependent type called or constructed in an expression, read without ``typename``
        rb"|(?:(?<=\()|(?<=[=,{] )|(?<=return ))(?P<typename>typename)"
        rb"(?=[ \t]+(?:\w+(?:<[^;{}]*?>)?::)+(?:template[ \t]+)?\w+(?:<[^;{}()]*>)?[({>])"
        # ``typename Ptr = const T*`` (a template parameter's default with ``const``, a
        # pointer or a reference, none of which the grammar takes there): ``= T``
        rb"|(?P<tdefault>\btypename[ \t]+\w+[ \t]*=[ \t]*(?:const[ \t]+)?[\w:]+"
        rb"(?:<[^<>;{}()]*>)?[ \t]*[*&]+)(?=[ \t]*[>,])"
        # ``void write(OutputIt, foo) = delete;`` outside a class: read as a declaration
        rb"|(?P<delete>\)[ \t]*=[ \t]*delete)(?=[ \t]*;)"
        # ``TEST(format_test, enum)``: a keyword as a macro's argument, read as ``Enum``
        rb"|(?<=[(,] )(?P<keyword>enum)(?=\))"
        # ``using value_type =`` or a template's head followed by ``#if``/``#else``/
        # ``#endif`` around one to three lines each: read as the first branch
        rb"|(?<=[=>]\n)(?P<alt>[ \t]*#[ \t]*if[^\n]*\n(?:[^\n#]*\n){1,3}[ \t]*#[ \t]*else[^\n]*\n"
        rb"(?:[^\n#]*\n){1,3}[ \t]*#[ \t]*endif[^\n]*)"
        rb"|(?P<include>" + _INCLUDE_FORM + rb")"
        # ``decltype(typename C::template f<T>().g(), true)`` (SFINAE): the grammar takes
        # neither a comma operator nor ``typename``/``template`` there; read as
        # ``decltype(C::f<T>().g()| true)``
        rb"|(?P<decltype>\bdecltype" + _ARGS + rb")"
        rb"|" + _COMMON + rb""
        # ``auto localtime_r FMT_NOMACRO(...)``: a macro that expands to nothing between a
        # function's name and its parameters (it keeps a macro of that name from
        # expanding); after ``auto`` and one name nothing else can stand there. Last, as
        # it is checked after matching: ``uint8_t NPY_DECL_ALIGNED(16) data`` is a form
        # of ``_COMMON``
        rb"|(?<=[a-z0-9_] )(?P<nomacro>" + _MACRO + rb")(?=\()"
        rb")",
        re.MULTILINE,
    ),
}
_GRAMMAR_OF = {pattern: grammar for grammar, pattern in _MACROS.items()}
# every form above holds one of these: a paragraph without any (most of a file) is left
# as it is without trying the forms at each of its bytes
_MAYBE = re.compile(
    rb"[A-Z][A-Z0-9]*[_(]|#|\b(?:decltype|enum|extern|unsigned|using)\b|[(=,{ <]typename\b"
    rb"|=[ \t]*\{[^{}()\n;]*\}|\([<\"]|[\w)] >= |= *delete"
)
_BLANKS = re.compile(rb"[^\n]")
_TEMPLATE_HEAD = re.compile(rb"\btemplate\s*<[^;{}]*$")
_SAME_LENGTH = {
    "try": b"try",
    "catch": b"catch",
    "cast": b"Unsigned",
    "enum": b"enum _:",
    "extern": b"",
    "using": b"using",
}


def _in_directive(text: bytes, offset: int) -> bool:
    """Whether ``offset`` lies in a preprocessor line (continuation lines included)."""
    start = text.rfind(b"\n", 0, offset) + 1
    while start > 1 and text[start - 2 : start - 1] == b"\\":
        start = text.rfind(b"\n", 0, start - 1) + 1
    return text[start:offset].lstrip().startswith(b"#")


def _line_start(text: bytes, offset: int) -> bool:
    """Whether only spaces stand before ``offset`` on its line."""
    return not text[text.rfind(b"\n", 0, offset) + 1 : offset].strip()


def _rewrite(match: re.Match[bytes]) -> bytes:
    kind = match.lastgroup
    text = match[0]
    if kind in ("group", "stmt") and not _line_start(match.string, match.start()):
        return text
    if kind == "group":
        first, *body, last = text.split(b"\n")
        inner = _MACROS[_GRAMMAR_OF[match.re]].sub(_rewrite, b"\n".join(body))
        return b"\n".join((_BLANKS.sub(b" ", first), inner, _BLANKS.sub(b" ", last)))
    if kind == "alt":
        return _first_branch(match)
    if kind == "define":
        return _BLOCK_COMMENT.sub(_blank, text) if b"/*" in text else text
    if kind == "trailing" and _TYPE_BEFORE.search(
        match.string, max(0, match.start() - 24), match.start()
    ):
        return text  # ``template <bool IS_CONSTEXPR, ...>``: a parameter's name
    if kind == "include":
        if not _in_directive(match.string, match.start()):
            return text  # ``f("name")`` in code
        return _plain_include(match)
    if _in_directive(match.string, match.start()):
        # ``#if FMT_HAS_INCLUDE(<version>)``: the macro stays, its argument is read
        return _INCLUDE.sub(_plain_include, text) if kind in ("attr", "call") else text
    if kind == "after":
        return _MACRO_WORD.sub(_blank, text)
    if kind == "decltype":
        return _plain_decltype(text)
    if kind == "stmt":
        return _BLANKS.sub(b" ", text[:-1]) + b";"
    if kind == "braced":
        inner = text[text.index(b"{") + 1 : -1]
        if not inner.strip():
            return text.replace(b"{}", b"0 ")
        return text.replace(b"{", b"(", 1)[:-1] + b")"
    if kind == "ge":
        return b" -"
    if kind == "tdefault":
        head, _, default = text.partition(b"=")
        return head + b"=" + _CONST_OR_POINTER.sub(_blank, default)
    if kind == "delete":
        return b")" + _BLANKS.sub(b" ", text[1:])
    if kind == "nomacro" and not _AUTO_AND_NAME.search(
        match.string, max(0, match.start() - 80), match.start()
    ):
        return text
    if kind == "keyword":
        return text.capitalize()
    if kind == "param":
        if not _in_template_head(match.string, match.start(), match.start() + 1):
            return text  # a macro argument of a call, not a template parameter
        start = len(text) - len(text[1:].lstrip())
        return text[:start] + b"int" + _BLANKS.sub(b" ", text[start + 3 :])
    if kind in _SAME_LENGTH:
        return _SAME_LENGTH[kind].ljust(len(text))
    return _BLANKS.sub(b" ", text)


_INCLUDE = re.compile(_INCLUDE_FORM)
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.DOTALL)
_MACRO_WORD = re.compile(rb"\b" + _MACRO + rb"\b")
_MACRO_BEFORE_NAME = re.compile(rb"\b" + _MACRO + rb"(?=[ \t]+[A-Za-z_])")
_CONST_OR_POINTER = re.compile(rb"\bconst\b|[*&]")
_AUTO_AND_NAME = re.compile(rb"\bauto[ \t]+[a-z_]\w*[ \t]+\Z")
# a type keyword right before a macro-like word: the word is a name
_TYPE_BEFORE = re.compile(
    rb"\b(?:bool|char|short|int|long|unsigned|signed|float|double|auto|size_t|typename|class)"
    rb"[ \t]+\Z"
)


def _in_template_head(string: bytes, start: int, end: int) -> bool:
    """Whether ``string[:end]`` ends inside (or right at the close of) a template's
    parameter list, looking back from ``end`` to 400 bytes before ``start``."""
    return _TEMPLATE_HEAD.search(string[max(0, start - 400) : end]) is not None


def _first_branch(match: re.Match[bytes]) -> bytes:
    """``#if`` / lines / ``#else`` / lines / ``#endif`` as the first branch's lines."""
    text = match[0]
    start = match.start()
    if match.string[max(0, start - 2) : start] == b">\n" and not _in_template_head(
        match.string, start, start - 1
    ):
        return text  # ``#include <x>`` before it: not a declaration's alternatives
    first, *lines = text.split(b"\n")
    otherwise = next(k for k, line in enumerate(lines) if line.lstrip().startswith(b"#"))
    dropped = [_BLANKS.sub(b" ", line) for line in lines[otherwise:]]
    return b"\n".join([_BLANKS.sub(b" ", first), *lines[:otherwise], *dropped])


def _blank(match: re.Match[bytes]) -> bytes:
    return _BLANKS.sub(b" ", match[0])


def _plain_include(match: re.Match[bytes]) -> bytes:
    """``(<bit>)`` or ``("bit.h")`` as ``( bit_h )``: a name the grammar reads."""
    return b"( " + re.sub(rb"[.+-]", b"_", match[0][2:-2]) + b" )"


_DEPENDENT = re.compile(rb"\btypename\b|(?<=::)template\b")


def _plain_decltype(text: bytes) -> bytes:
    text = _MACRO_BEFORE_NAME.sub(_blank, text)  # ``decltype(FMT_THIS map(x))``
    out = bytearray(_DEPENDENT.sub(lambda m: b" " * len(m[0]), text))
    parens = angles = 0
    for i, ch in enumerate(out):
        if ch == 0x28:  # (
            parens += 1
        elif ch == 0x29:  # )
            parens -= 1
        elif ch == 0x3C:  # <
            angles += 1
        elif ch == 0x3E and angles:  # >
            angles -= 1
        elif ch == 0x2C and parens == 1 and not angles:  # a top-level comma
            out[i] = 0x7C  # |
    return bytes(out)


def unmacro(grammar: str, source: bytes) -> bytes:
    """``source`` with the macros tree-sitter cannot read rewritten (C and C++ only).

    The text is rewritten paragraph by paragraph (between blank lines; a form that
    would span one stays as written), and a paragraph seen before (in an earlier
    version of the file, most of them) is taken from a cache instead of being matched
    again.
    """
    if grammar not in _MACROS:
        return source
    return b"\n\n".join(rewrite_each(grammar, source.split(b"\n\n")))


def rewrite_each(grammar: str, paragraphs: list[bytes]) -> list[bytes]:
    """Each paragraph rewritten on its own (unchanged for a grammar without macros)."""
    pattern = _MACROS.get(grammar)
    if pattern is None:
        return paragraphs
    cache: dict[bytes, bytes] | None = getattr(_local, grammar, None)
    if cache is None or len(cache) > _PARAGRAPHS:
        cache = {}
        setattr(_local, grammar, cache)
    out = []
    for part in paragraphs:
        done = cache.get(part)
        if done is None:
            done = _cuda(part) if grammar == "cpp" else part
            done = cache[part] = pattern.sub(_rewrite, done) if _MAYBE.search(done) else done
        out.append(done)
    return out


_PARAGRAPHS = 50_000  # rewritten paragraphs kept per thread and grammar

# CUDA's qualifiers, blanked: ``__global__ void __launch_bounds__(256, 2) k(`` is read
# as ``void k(`` (tree-sitter's C++ grammar took the launch bounds for the name)
_CUDA_WORDS = re.compile(
    rb"\b__(?:global|device|host|forceinline|noinline|shared|constant|managed)__\b"
    rb"|\b__(?:launch_bounds|align)__[ \t]*" + _ARGS
)
# a kernel launch ``k<<<grid, block>>>(args)`` as the call ``k(  grid, block  )(args)``
_LAUNCH = re.compile(rb"(?<=[\w>)\]])([ \t]*)<<<([^;{}<>]*(?:<[^;{}<>]*>[^;{}<>]*)*)>>>(?=\s*\()")


def _cuda(part: bytes) -> bytes:
    """``part`` with CUDA's qualifiers blanked and its launches read as calls, in text of
    the same length (a paragraph of plain C++ is returned as it is)."""
    if b"__" in part:
        part = _CUDA_WORDS.sub(_blank, part)
    if b"<<<" in part:
        part = _LAUNCH.sub(lambda m: m[1] + b"(  " + m[2] + b"  )", part)
    return part
