"""Eight small bugs in Go and Java, each with its issue text, the buggy and fixed source, the tests
that already pass (pass-to-pass), the gold tests that expose it (fail-to-pass), and a reference
regression test. `code.py` makes an issue-resolving task and a test-generation task of each."""

from __future__ import annotations

from dataclasses import dataclass

from iclr26.devops_gym.suite import dedent
from iclr26.devops_gym.suite.projects import go_mod, java_path, pom


@dataclass(frozen=True)
class Bug:
    """One bug in a small repository."""

    name: str
    language: str
    difficulty: str
    issue: str  # the issue text, as a user would file it
    files: dict[str, str]  # the repository apart from the buggy source and its tests
    source_path: str
    buggy: str
    fix: tuple[tuple[str, str], ...]  # the fix as replacements (each old text occurs once in buggy)
    tests_path: str  # the existing tests (pass on both versions)
    tests: str
    gold_path: str  # the gold tests, added next to the existing ones
    gold: str
    p2p: tuple[str, ...]
    f2p: tuple[str, ...]
    regression_path: str  # where a test-generation agent writes its test
    regression: str  # the reference answer for that file (fails on buggy, passes on fixed)

    @property
    def fixed(self) -> str:
        """The fixed source: `buggy` with the replacements of `fix` applied."""
        text = self.buggy
        for old, new in self.fix:
            if text.count(old) != 1:
                raise ValueError(
                    f"bug {self.name}: the fix's text {old[:40]!r} must occur once in the buggy source"
                )
            text = text.replace(old, new)
        return text


def _go(name: str, **kw: object) -> Bug:
    return Bug(name=name, language="go", files={"go.mod": go_mod(f"example.com/{name}")}, **kw)  # type: ignore[arg-type]


def _java(name: str, **kw: object) -> Bug:
    return Bug(name=name, language="java", files={"pom.xml": pom(name)}, **kw)  # type: ignore[arg-type]


REVERSE_COMMON = """
// IsPalindrome reports whether s reads the same in both directions.
func IsPalindrome(s string) bool { return s == Reverse(s) }
"""

BUGS: tuple[Bug, ...] = (
    _go(
        "textutil",
        difficulty="easy",
        issue="""
            `textutil.Reverse` garbles non-ASCII text. `Reverse("héllo")` should be "olléh" but
            returns invalid UTF-8 ("oll\\xa9\\xc3h"), and `IsPalindrome("été")` is false.
            Reverse should reverse characters (runes), not bytes.""",
        source_path="reverse.go",
        buggy=dedent("""
            package textutil

            // Reverse returns s with its characters in reverse order.
            func Reverse(s string) string {
            	b := []byte(s)
            	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
            		b[i], b[j] = b[j], b[i]
            	}
            	return string(b)
            }
            """)
        + REVERSE_COMMON,
        fix=(
            ("b := []byte(s)", "r := []rune(s)"),
            ("len(b)-1", "len(r)-1"),
            ("b[i], b[j] = b[j], b[i]", "r[i], r[j] = r[j], r[i]"),
            ("return string(b)", "return string(r)"),
        ),
        tests_path="reverse_test.go",
        tests=dedent("""
            package textutil

            import "testing"

            func TestReverseASCII(t *testing.T) {
            	if got := Reverse("hello"); got != "olleh" {
            		t.Fatalf("Reverse(hello) = %q", got)
            	}
            }

            func TestPalindromeASCII(t *testing.T) {
            	if !IsPalindrome("level") || IsPalindrome("levels") {
            		t.Fatal("IsPalindrome is wrong on ASCII")
            	}
            }
            """),
        gold_path="reverse_gold_test.go",
        gold=dedent("""
            package textutil

            import "testing"

            func TestReverseUnicode(t *testing.T) {
            	if got := Reverse("héllo, 世界"); got != "界世 ,olléh" {
            		t.Fatalf("Reverse = %q", got)
            	}
            }

            func TestPalindromeUnicode(t *testing.T) {
            	if !IsPalindrome("été") {
            		t.Fatal("été is a palindrome")
            	}
            }
            """),
        p2p=("TestReverseASCII", "TestPalindromeASCII"),
        f2p=("TestReverseUnicode", "TestPalindromeUnicode"),
        regression_path="reverse_regression_test.go",
        regression=dedent("""
            package textutil

            import "testing"

            func TestReverseKeepsRunes(t *testing.T) {
            	if got := Reverse("añb"); got != "bña" {
            		t.Fatalf("Reverse(añb) = %q", got)
            	}
            }
            """),
    ),
    _go(
        "intervals",
        difficulty="medium",
        issue="""
            `intervals.Merge` leaves touching intervals apart: `Merge([{1 3} {3 5}])` returns
            `[{1 3} {3 5}]`, but intervals that share an endpoint should merge into `[{1 5}]`
            (the doc comment says so).""",
        source_path="merge.go",
        buggy=dedent("""
            package intervals

            import "sort"

            // Interval is the closed range [Start, End].
            type Interval struct{ Start, End int }

            // Merge returns the union of the intervals as sorted, disjoint intervals; intervals
            // that overlap or touch (share an endpoint) are merged.
            func Merge(in []Interval) []Interval {
            	if len(in) == 0 {
            		return nil
            	}
            	s := append([]Interval(nil), in...)
            	sort.Slice(s, func(i, j int) bool { return s[i].Start < s[j].Start })
            	out := []Interval{s[0]}
            	for _, iv := range s[1:] {
            		last := &out[len(out)-1]
            		if iv.Start < last.End {
            			if iv.End > last.End {
            				last.End = iv.End
            			}
            		} else {
            			out = append(out, iv)
            		}
            	}
            	return out
            }
            """),
        fix=(("if iv.Start < last.End {", "if iv.Start <= last.End {"),),
        tests_path="merge_test.go",
        tests=dedent("""
            package intervals

            import (
            	"reflect"
            	"testing"
            )

            func TestMergeOverlapping(t *testing.T) {
            	got := Merge([]Interval{{2, 6}, {1, 4}, {8, 9}})
            	if want := []Interval{{1, 6}, {8, 9}}; !reflect.DeepEqual(got, want) {
            		t.Fatalf("got %v, want %v", got, want)
            	}
            }

            func TestMergeDisjoint(t *testing.T) {
            	got := Merge([]Interval{{5, 6}, {1, 2}})
            	if want := []Interval{{1, 2}, {5, 6}}; !reflect.DeepEqual(got, want) {
            		t.Fatalf("got %v, want %v", got, want)
            	}
            }
            """),
        gold_path="merge_gold_test.go",
        gold=dedent("""
            package intervals

            import (
            	"reflect"
            	"testing"
            )

            func TestMergeTouching(t *testing.T) {
            	got := Merge([]Interval{{3, 5}, {1, 3}, {7, 8}})
            	if want := []Interval{{1, 5}, {7, 8}}; !reflect.DeepEqual(got, want) {
            		t.Fatalf("got %v, want %v", got, want)
            	}
            }
            """),
        p2p=("TestMergeOverlapping", "TestMergeDisjoint"),
        f2p=("TestMergeTouching",),
        regression_path="merge_regression_test.go",
        regression=dedent("""
            package intervals

            import "testing"

            func TestTouchingIntervalsMerge(t *testing.T) {
            	got := Merge([]Interval{{1, 3}, {3, 5}})
            	if len(got) != 1 || got[0] != (Interval{1, 5}) {
            		t.Fatalf("got %v", got)
            	}
            }
            """),
    ),
    _go(
        "lrucache",
        difficulty="medium",
        issue="""
            The LRU cache evicts keys that were just read. After `Put("a")`, `Put("b")`, `Get("a")`
            and `Put("c")` on a cache of capacity 2, "a" is gone and "b" survives. A `Get` should
            make its key the most recently used, so "b" should be evicted.""",
        source_path="lru.go",
        buggy=dedent("""
            package lrucache

            import "container/list"

            type entry struct {
            	key   string
            	value int
            }

            // LRU is a fixed-capacity cache that evicts the least recently used key.
            type LRU struct {
            	capacity int
            	order    *list.List
            	items    map[string]*list.Element
            }

            // New returns an empty cache holding at most capacity keys.
            func New(capacity int) *LRU {
            	return &LRU{capacity: capacity, order: list.New(), items: map[string]*list.Element{}}
            }

            // Get returns the value of key and marks the key most recently used.
            func (c *LRU) Get(key string) (int, bool) {
            	el, ok := c.items[key]
            	if !ok {
            		return 0, false
            	}
            	return el.Value.(*entry).value, true
            }

            // Put sets key to value, evicting the least recently used key when the cache is full.
            func (c *LRU) Put(key string, value int) {
            	if el, ok := c.items[key]; ok {
            		el.Value.(*entry).value = value
            		c.order.MoveToFront(el)
            		return
            	}
            	if c.order.Len() >= c.capacity {
            		oldest := c.order.Back()
            		c.order.Remove(oldest)
            		delete(c.items, oldest.Value.(*entry).key)
            	}
            	c.items[key] = c.order.PushFront(&entry{key, value})
            }
            """),
        fix=(
            (
                "\t\treturn 0, false\n\t}\n\treturn el.Value",
                "\t\treturn 0, false\n\t}\n\tc.order.MoveToFront(el)\n\treturn el.Value",
            ),
        ),
        tests_path="lru_test.go",
        tests=dedent("""
            package lrucache

            import "testing"

            func TestPutGet(t *testing.T) {
            	c := New(2)
            	c.Put("a", 1)
            	if v, ok := c.Get("a"); !ok || v != 1 {
            		t.Fatalf("Get(a) = %d, %v", v, ok)
            	}
            }

            func TestEvictsOldestUnread(t *testing.T) {
            	c := New(2)
            	c.Put("a", 1)
            	c.Put("b", 2)
            	c.Put("c", 3)
            	if _, ok := c.Get("a"); ok {
            		t.Fatal("a should have been evicted")
            	}
            }
            """),
        gold_path="lru_gold_test.go",
        gold=dedent("""
            package lrucache

            import "testing"

            func TestGetRefreshesRecency(t *testing.T) {
            	c := New(2)
            	c.Put("a", 1)
            	c.Put("b", 2)
            	c.Get("a")
            	c.Put("c", 3)
            	if _, ok := c.Get("a"); !ok {
            		t.Fatal("a was read last and must survive")
            	}
            	if _, ok := c.Get("b"); ok {
            		t.Fatal("b is the least recently used and must be evicted")
            	}
            }
            """),
        p2p=("TestPutGet", "TestEvictsOldestUnread"),
        f2p=("TestGetRefreshesRecency",),
        regression_path="lru_regression_test.go",
        regression=dedent("""
            package lrucache

            import "testing"

            func TestReadKeySurvivesEviction(t *testing.T) {
            	c := New(2)
            	c.Put("x", 1)
            	c.Put("y", 2)
            	c.Get("x")
            	c.Put("z", 3)
            	if _, ok := c.Get("x"); !ok {
            		t.Fatal("x was evicted although it was read after y")
            	}
            }
            """),
    ),
    _go(
        "semver",
        difficulty="easy",
        issue="""
            `semver.Compare("1.10.0", "1.9.0")` returns -1: version 1.10.0 is reported as older than
            1.9.0. Components must be compared as numbers, not as strings.""",
        source_path="compare.go",
        buggy=dedent("""
            package semver

            import "strings"

            // Compare returns -1, 0 or 1 as version a is older than, equal to or newer than b
            // (versions are MAJOR.MINOR.PATCH).
            func Compare(a, b string) int {
            	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
            	for i := 0; i < 3; i++ {
            		if pa[i] != pb[i] {
            			if pa[i] < pb[i] {
            				return -1
            			}
            			return 1
            		}
            	}
            	return 0
            }
            """),
        fix=(
            ('import "strings"', 'import (\n\t"strconv"\n\t"strings"\n)'),
            (
                "\t\tif pa[i] != pb[i] {\n\t\t\tif pa[i] < pb[i] {",
                "\t\tx, _ := strconv.Atoi(pa[i])\n"
                "\t\ty, _ := strconv.Atoi(pb[i])\n"
                "\t\tif x != y {\n"
                "\t\t\tif x < y {",
            ),
        ),
        tests_path="compare_test.go",
        tests=dedent("""
            package semver

            import "testing"

            func TestComparePatch(t *testing.T) {
            	if Compare("1.2.3", "1.2.4") != -1 || Compare("1.2.4", "1.2.3") != 1 {
            		t.Fatal("patch order is wrong")
            	}
            }

            func TestCompareEqual(t *testing.T) {
            	if Compare("2.0.1", "2.0.1") != 0 {
            		t.Fatal("equal versions must compare 0")
            	}
            }
            """),
        gold_path="compare_gold_test.go",
        gold=dedent("""
            package semver

            import "testing"

            func TestCompareMultiDigit(t *testing.T) {
            	if got := Compare("1.10.0", "1.9.0"); got != 1 {
            		t.Fatalf("Compare(1.10.0, 1.9.0) = %d", got)
            	}
            	if got := Compare("0.9.12", "0.9.2"); got != 1 {
            		t.Fatalf("Compare(0.9.12, 0.9.2) = %d", got)
            	}
            }
            """),
        p2p=("TestComparePatch", "TestCompareEqual"),
        f2p=("TestCompareMultiDigit",),
        regression_path="compare_regression_test.go",
        regression=dedent("""
            package semver

            import "testing"

            func TestTwoDigitMinorIsNewer(t *testing.T) {
            	if Compare("3.12.0", "3.2.0") != 1 {
            		t.Fatal("3.12.0 is newer than 3.2.0")
            	}
            }
            """),
    ),
    _java(
        "roman",
        difficulty="easy",
        issue="""
            `Roman.toInt("XIV")` returns 16 instead of 14, and `Roman.toInt("MCMXCIV")` returns 2216
            instead of 1994. A numeral written before a larger one must be subtracted (IV = 4,
            IX = 9, XC = 90, CM = 900).""",
        source_path=java_path("org.example.roman", "Roman"),
        buggy=dedent("""
            package org.example.roman;

            import java.util.Map;

            public final class Roman {
                private static final Map<Character, Integer> VALUES =
                        Map.of('I', 1, 'V', 5, 'X', 10, 'L', 50, 'C', 100, 'D', 500, 'M', 1000);

                private Roman() {}

                /** The value of a Roman numeral such as "XIV". */
                public static int toInt(String numeral) {
                    int total = 0;
                    for (int i = 0; i < numeral.length(); i++) {
                        total += VALUES.get(numeral.charAt(i));
                    }
                    return total;
                }
            }
            """),
        fix=(
            (
                "        total += VALUES.get(numeral.charAt(i));",
                "        int value = VALUES.get(numeral.charAt(i));\n"
                "            boolean beforeLarger =\n"
                "                    i + 1 < numeral.length() && VALUES.get(numeral.charAt(i + 1)) > value;\n"
                "            total += beforeLarger ? -value : value;",
            ),
        ),
        tests_path=java_path("org.example.roman", "RomanTest", test=True),
        tests=dedent("""
            package org.example.roman;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import org.junit.jupiter.api.Test;

            class RomanTest {
                @Test
                void additive() {
                    assertEquals(26, Roman.toInt("XXVI"));
                }

                @Test
                void allSymbols() {
                    assertEquals(1666, Roman.toInt("MDCLXVI"));
                }
            }
            """),
        gold_path=java_path("org.example.roman", "RomanGoldTest", test=True),
        gold=dedent("""
            package org.example.roman;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import org.junit.jupiter.api.Test;

            class RomanGoldTest {
                @Test
                void subtractive() {
                    assertEquals(14, Roman.toInt("XIV"));
                    assertEquals(1994, Roman.toInt("MCMXCIV"));
                }
            }
            """),
        p2p=("RomanTest.additive", "RomanTest.allSymbols"),
        f2p=("RomanGoldTest.subtractive",),
        regression_path=java_path("org.example.roman", "RomanRegressionTest", test=True),
        regression=dedent("""
            package org.example.roman;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import org.junit.jupiter.api.Test;

            class RomanRegressionTest {
                @Test
                void nineIsIX() {
                    assertEquals(9, Roman.toInt("IX"));
                }
            }
            """),
    ),
    _java(
        "money",
        difficulty="medium",
        issue="""
            `Money.split(1000, 3)` returns [333, 333, 333]: one cent disappears. Splitting an amount
            must keep the total: the remainder goes one cent each to the first parts, so the
            answer is [334, 333, 333].""",
        source_path=java_path("org.example.money", "Money"),
        buggy=dedent("""
            package org.example.money;

            public final class Money {
                private Money() {}

                /** Split an amount in cents into `parts` nearly equal parts that add up to it. */
                public static long[] split(long cents, int parts) {
                    long[] out = new long[parts];
                    for (int i = 0; i < parts; i++) {
                        out[i] = cents / parts;
                    }
                    return out;
                }
            }
            """),
        fix=(
            (
                "        for (int i = 0; i < parts; i++) {\n            out[i] = cents / parts;",
                "        long remainder = cents % parts;\n"
                "        for (int i = 0; i < parts; i++) {\n"
                "            out[i] = cents / parts + (i < remainder ? 1 : 0);",
            ),
        ),
        tests_path=java_path("org.example.money", "MoneyTest", test=True),
        tests=dedent("""
            package org.example.money;

            import static org.junit.jupiter.api.Assertions.assertArrayEquals;

            import org.junit.jupiter.api.Test;

            class MoneyTest {
                @Test
                void evenSplit() {
                    assertArrayEquals(new long[] {300, 300, 300}, Money.split(900, 3));
                }

                @Test
                void onePart() {
                    assertArrayEquals(new long[] {1234}, Money.split(1234, 1));
                }
            }
            """),
        gold_path=java_path("org.example.money", "MoneyGoldTest", test=True),
        gold=dedent("""
            package org.example.money;

            import static org.junit.jupiter.api.Assertions.assertArrayEquals;

            import org.junit.jupiter.api.Test;

            class MoneyGoldTest {
                @Test
                void remainderGoesToFirstParts() {
                    assertArrayEquals(new long[] {334, 333, 333}, Money.split(1000, 3));
                    assertArrayEquals(new long[] {3, 3, 2, 2}, Money.split(10, 4));
                }
            }
            """),
        p2p=("MoneyTest.evenSplit", "MoneyTest.onePart"),
        f2p=("MoneyGoldTest.remainderGoesToFirstParts",),
        regression_path=java_path("org.example.money", "MoneyRegressionTest", test=True),
        regression=dedent("""
            package org.example.money;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import java.util.Arrays;
            import org.junit.jupiter.api.Test;

            class MoneyRegressionTest {
                @Test
                void partsAddUpToTheTotal() {
                    assertEquals(101, Arrays.stream(Money.split(101, 2)).sum());
                }
            }
            """),
    ),
    _java(
        "csvline",
        difficulty="hard",
        issue="""
            `Csv.parseLine` splits inside quoted fields: `a,"b,c",d` gives four fields
            (a | "b | c" | d) instead of three (a | b,c | d). Quoted fields (RFC 4180) may hold commas,
            and a doubled quote inside them stands for one quote character.""",
        source_path=java_path("org.example.csv", "Csv"),
        buggy=dedent("""
            package org.example.csv;

            import java.util.ArrayList;
            import java.util.Arrays;
            import java.util.List;

            public final class Csv {
                private Csv() {}

                /** The fields of one CSV line (RFC 4180 quoting). */
                public static List<String> parseLine(String line) {
                    return new ArrayList<>(Arrays.asList(line.split(",", -1)));
                }
            }
            """),
        fix=(
            ("import java.util.Arrays;\n", ""),
            (
                '        return new ArrayList<>(Arrays.asList(line.split(",", -1)));\n',
                "        List<String> fields = new ArrayList<>();\n"
                "        StringBuilder field = new StringBuilder();\n"
                "        boolean quoted = false;\n"
                "        for (int i = 0; i < line.length(); i++) {\n"
                "            char c = line.charAt(i);\n"
                "            if (quoted) {\n"
                "                if (c == '\"' && i + 1 < line.length() && line.charAt(i + 1) == '\"') {\n"
                "                    field.append('\"');\n"
                "                    i++;\n"
                "                } else if (c == '\"') {\n"
                "                    quoted = false;\n"
                "                } else {\n"
                "                    field.append(c);\n"
                "                }\n"
                "            } else if (c == '\"') {\n"
                "                quoted = true;\n"
                "            } else if (c == ',') {\n"
                "                fields.add(field.toString());\n"
                "                field.setLength(0);\n"
                "            } else {\n"
                "                field.append(c);\n"
                "            }\n"
                "        }\n"
                "        fields.add(field.toString());\n"
                "        return fields;\n",
            ),
        ),
        tests_path=java_path("org.example.csv", "CsvTest", test=True),
        tests=dedent("""
            package org.example.csv;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import java.util.List;
            import org.junit.jupiter.api.Test;

            class CsvTest {
                @Test
                void plainFields() {
                    assertEquals(List.of("a", "b", "c"), Csv.parseLine("a,b,c"));
                }

                @Test
                void emptyFields() {
                    assertEquals(List.of("a", "", "c"), Csv.parseLine("a,,c"));
                }
            }
            """),
        gold_path=java_path("org.example.csv", "CsvGoldTest", test=True),
        gold=dedent("""
            package org.example.csv;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import java.util.List;
            import org.junit.jupiter.api.Test;

            class CsvGoldTest {
                @Test
                void quotedComma() {
                    assertEquals(List.of("a", "b,c", "d"), Csv.parseLine("a,\\"b,c\\",d"));
                }

                @Test
                void doubledQuote() {
                    assertEquals(List.of("say \\"hi\\"", "x"), Csv.parseLine("\\"say \\"\\"hi\\"\\"\\",x"));
                }
            }
            """),
        p2p=("CsvTest.plainFields", "CsvTest.emptyFields"),
        f2p=("CsvGoldTest.quotedComma", "CsvGoldTest.doubledQuote"),
        regression_path=java_path("org.example.csv", "CsvRegressionTest", test=True),
        regression=dedent("""
            package org.example.csv;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import org.junit.jupiter.api.Test;

            class CsvRegressionTest {
                @Test
                void commaInsideQuotesIsData() {
                    assertEquals(2, Csv.parseLine("\\"Smith, J\\",42").size());
                }
            }
            """),
    ),
    _java(
        "stats",
        difficulty="easy",
        issue="""
            `Stats.median(List.of(4.0, 1.0, 3.0, 2.0))` returns 3.0. For an even number of values
            the median is the mean of the two middle values: 2.5 here.""",
        source_path=java_path("org.example.stats", "Stats"),
        buggy=dedent("""
            package org.example.stats;

            import java.util.ArrayList;
            import java.util.Collections;
            import java.util.List;

            public final class Stats {
                private Stats() {}

                /** The median of a non-empty list of values. */
                public static double median(List<Double> values) {
                    List<Double> sorted = new ArrayList<>(values);
                    Collections.sort(sorted);
                    return sorted.get(sorted.size() / 2);
                }
            }
            """),
        fix=(
            (
                "        return sorted.get(sorted.size() / 2);",
                "        int n = sorted.size();\n"
                "        if (n % 2 == 1) {\n"
                "            return sorted.get(n / 2);\n"
                "        }\n"
                "        return (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;",
            ),
        ),
        tests_path=java_path("org.example.stats", "StatsTest", test=True),
        tests=dedent("""
            package org.example.stats;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import java.util.List;
            import org.junit.jupiter.api.Test;

            class StatsTest {
                @Test
                void oddCount() {
                    assertEquals(2.0, Stats.median(List.of(3.0, 1.0, 2.0)));
                }

                @Test
                void single() {
                    assertEquals(7.5, Stats.median(List.of(7.5)));
                }
            }
            """),
        gold_path=java_path("org.example.stats", "StatsGoldTest", test=True),
        gold=dedent("""
            package org.example.stats;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import java.util.List;
            import org.junit.jupiter.api.Test;

            class StatsGoldTest {
                @Test
                void evenCount() {
                    assertEquals(2.5, Stats.median(List.of(4.0, 1.0, 3.0, 2.0)));
                }
            }
            """),
        p2p=("StatsTest.oddCount", "StatsTest.single"),
        f2p=("StatsGoldTest.evenCount",),
        regression_path=java_path("org.example.stats", "StatsRegressionTest", test=True),
        regression=dedent("""
            package org.example.stats;

            import static org.junit.jupiter.api.Assertions.assertEquals;

            import java.util.List;
            import org.junit.jupiter.api.Test;

            class StatsRegressionTest {
                @Test
                void medianOfTwo() {
                    assertEquals(1.5, Stats.median(List.of(1.0, 2.0)));
                }
            }
            """),
    ),
)
