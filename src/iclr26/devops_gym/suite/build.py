"""Build and configuration tasks: repairs of DevOps-Gym's five build-error types in Java (Maven,
offline) and Go, and implementation tasks (a Surefire configuration, a release target).

Every verifier builds a copy of the work dir with the project's own tests restored from the task's
copy (so deleting a failing test gains nothing), requires the build and each named test to pass,
and adds the task's own check (the class-file version, aligned versions, the release binary, ...).
"""

from __future__ import annotations

from iclr26.devops_gym.suite import TaskDraft, dedent
from iclr26.devops_gym.suite.code import _heredoc
from iclr26.devops_gym.suite.projects import go_mod, java_path, pom

PKG = "org.example.inventory"
INVENTORY_JAVA = dedent("""
    package org.example.inventory;

    import java.util.Map;
    import java.util.TreeMap;

    /** Stock counts per item. */
    public final class Inventory {
        private final Map<String, Long> items = new TreeMap<>();

        public void add(String item, long count) {
            items.merge(item, count, Long::sum);
        }

        public boolean remove(String item, long count) {
            long have = items.getOrDefault(item, 0L);
            if (have < count) {
                return false;
            }
            items.put(item, have - count);
            return true;
        }

        public long count(String item) {
            return items.getOrDefault(item, 0L);
        }

        public long total() {
            long total = items.values().stream().mapToLong(Long::longValue).sum();
            return total;
        }
    }
    """)
INVENTORY_TEST = dedent("""
    package org.example.inventory;

    import static org.junit.jupiter.api.Assertions.assertEquals;
    import static org.junit.jupiter.api.Assertions.assertFalse;
    import static org.junit.jupiter.api.Assertions.assertTrue;

    import org.junit.jupiter.api.Test;

    class InventoryTest {
        @Test
        void addsAndCounts() {
            Inventory inv = new Inventory();
            inv.add("bolt", 3);
            inv.add("bolt", 4);
            assertEquals(7, inv.count("bolt"));
        }

        @Test
        void refusesToOverdraw() {
            Inventory inv = new Inventory();
            inv.add("nut", 2);
            assertFalse(inv.remove("nut", 3));
            assertTrue(inv.remove("nut", 2));
            assertEquals(0, inv.count("nut"));
        }

        @Test
        void totalsBeyondIntRange() {
            Inventory inv = new Inventory();
            inv.add("washer", 3_000_000_000L);
            inv.add("screw", 1);
            assertEquals(3_000_000_001L, inv.total());
        }
    }
    """)
JAVA_TESTS = (
    "InventoryTest.addsAndCounts",
    "InventoryTest.refusesToOverdraw",
    "InventoryTest.totalsBeyondIntRange",
)
SLOW_TEST = dedent("""
    package org.example.inventory;

    import static org.junit.jupiter.api.Assertions.fail;

    import org.junit.jupiter.api.Tag;
    import org.junit.jupiter.api.Test;

    @Tag("slow")
    class WarehouseSyncTest {
        @Test
        void syncsWithTheWarehouseDatabase() {
            fail("needs the warehouse database, which only the nightly integration job has");
        }
    }
    """)

BUILD_TESTS = '''"""Build task: the project builds offline and its own tests (restored from the task) pass."""

import pytest
from checks import APP_DIR, TEST_DIR, go_test, maven, overlay, run, scratch_copy, surefire, tail

LANGUAGE = {language!r}
EXPECTED = {expected!r}


@pytest.fixture(scope="module")
def build():
    app = scratch_copy()
    overlay(TEST_DIR / "gold", app)
    if LANGUAGE == "go":
        compiled = run(["go", "build", "./..."], app)
        if compiled.returncode != 0:
            return app, compiled, {{}}
        proc, statuses = go_test(app)
    else:
        proc = maven(app, "test")
        statuses = surefire(app)
    return app, proc, statuses


def test_build_succeeds(build):
    app, proc, statuses = build
    assert proc.returncode == 0, tail(proc)


@pytest.mark.parametrize("name", EXPECTED)
def test_project_test_passes(build, name):
    app, proc, statuses = build
    assert statuses.get(name) == "passed", f"{{name}}: {{statuses.get(name, 'did not run')}}"
{extra}'''


def _build(
    name: str,
    language: str,
    difficulty: str,
    instruction: str,
    workspace: dict[str, str],
    fixed: dict[str, str],
    tests: dict[str, str],
    expected: tuple[str, ...],
    *,
    extra: str = "",
    tags: tuple[str, ...] = (),
) -> TaskDraft:
    """A build task: `fixed` holds the files the reference solution rewrites; `tests` the project's
    test files the verifier restores."""
    solution = "\n".join(_heredoc(path, content) for path, content in fixed.items())
    return TaskDraft(
        name=name,
        category="build",
        language=language,
        difficulty=difficulty,
        instruction=dedent(instruction),
        workspace={**workspace, **tests},
        tests=BUILD_TESTS.format(
            language=language, expected=list(expected), extra="\n\n" + dedent(extra) if extra else ""
        ),
        test_files={f"gold/{p}": c for p, c in tests.items()},
        solution=solution,
        tags=tags,
    )


JAVA_OFFLINE = "Maven runs offline here (`mvn -o`): nothing can be downloaded."


def _java_build(
    name: str, difficulty: str, instruction: str, broken: dict[str, str], fixed: dict[str, str], **kw: object
) -> TaskDraft:
    base = {"pom.xml": pom("inventory"), java_path(PKG, "Inventory"): INVENTORY_JAVA}
    tests = {java_path(PKG, "InventoryTest", test=True): INVENTORY_TEST}
    return _build(name, "java", difficulty, instruction, {**base, **broken}, fixed, tests, JAVA_TESTS, **kw)  # type: ignore[arg-type]


def java_tasks() -> list[TaskDraft]:
    """Five Java repairs (one per error type) and one implementation task."""
    inventory_src = java_path(PKG, "Inventory")
    int_total = INVENTORY_JAVA.replace("long total = items", "int total = items")
    slow_path = java_path(PKG, "WarehouseSyncTest", test=True)
    excluded = """
        <configuration>
          <excludedGroups>slow</excludedGroups>
        </configuration>"""
    return [
        _java_build(
            "java-compilation-error",
            "easy",
            f"""
            `mvn -o test` fails to compile this Maven project. Fix the compilation error so that the
            project builds and all its tests pass. Do not change the tests. {JAVA_OFFLINE}
            """,
            {inventory_src: int_total},
            {inventory_src: INVENTORY_JAVA},
            tags=("compilation-error",),
        ),
        _java_build(
            "java-toolchain-mismatch",
            "medium",
            f"""
            The build of this Maven project fails on this machine's JDK. Make it build and pass its
            tests with the installed JDK, without changing the code or the tests. {JAVA_OFFLINE}
            """,
            {"pom.xml": pom("inventory", release="21")},
            {"pom.xml": pom("inventory")},
            extra="""

            def test_class_files_run_on_the_installed_jdk(build):
                app, proc, statuses = build
                data = (app / "target/classes/org/example/inventory/Inventory.class").read_bytes()
                major = int.from_bytes(data[6:8], "big")
                assert major <= 61, f"class file version {major} needs a newer JVM than Java 17"
            """,
            tags=("toolchain-mismatch",),
        ),
        _java_build(
            "java-unavailable-dependency",
            "easy",
            f"""
            `mvn -o test` cannot resolve this project's test dependencies. Fix the build so the
            tests run and pass with the artifacts available in the local Maven repository.
            {JAVA_OFFLINE}
            """,
            {"pom.xml": pom("inventory", api_version="5.99.0", engine_version="5.99.0")},
            {"pom.xml": pom("inventory")},
            tags=("dependency-resource",),
        ),
        _java_build(
            "java-misconfigured-sources",
            "medium",
            f"""
            This Maven project's test compilation fails with "cannot find symbol" errors although
            the classes exist. Find the build misconfiguration and fix it; do not move or change
            the sources or the tests. {JAVA_OFFLINE}
            """,
            {
                "pom.xml": pom(
                    "inventory", build_extra="\n    <sourceDirectory>src/main/jav</sourceDirectory>"
                )
            },
            {"pom.xml": pom("inventory")},
            extra="""

            def test_main_classes_compiled(build):
                app, proc, statuses = build
                assert (app / "target/classes/org/example/inventory/Inventory.class").is_file()
            """,
            tags=("misconfiguration",),
        ),
        _java_build(
            "java-dependency-conflict",
            "hard",
            f"""
            The tests of this Maven project compile but Surefire cannot run them: the JUnit
            artifacts conflict. Resolve the version conflict so that the tests run and pass.
            {JAVA_OFFLINE}
            """,
            {"pom.xml": pom("inventory", api_version="5.14.1", engine_version="5.10.2")},
            {"pom.xml": pom("inventory")},
            extra="""

            def test_junit_versions_aligned():
                import xml.etree.ElementTree as ET

                ns = {"m": "http://maven.apache.org/POM/4.0.0"}
                root = ET.parse(APP_DIR / "pom.xml").getroot()
                versions = {
                    d.findtext("m:artifactId", namespaces=ns): d.findtext("m:version", namespaces=ns)
                    for d in root.iterfind(".//m:dependency", ns)
                }
                assert versions.get("junit-jupiter-api") == versions.get("junit-jupiter-engine"), versions
            """,
            tags=("dependency-conflict",),
        ),
        _java_build(
            "java-exclude-slow-tests",
            "medium",
            f"""
            `WarehouseSyncTest` is tagged `slow`: it needs a database that only the nightly job has,
            so `mvn -o test` fails here. Configure the build (the Surefire plugin in pom.xml) so
            that tests tagged `slow` are excluded from the default build, and every other test
            still runs. Keep the slow test as it is. {JAVA_OFFLINE}
            """,
            {slow_path: SLOW_TEST},
            {"pom.xml": pom("inventory", surefire_config=excluded)},
            extra=f'''

            def test_slow_test_kept_and_excluded(build):
                app, proc, statuses = build
                source = (APP_DIR / "{slow_path}").read_text()
                assert '@Tag("slow")' in source and "fail(" in source, "the slow test was changed"
                assert not any(name.startswith("WarehouseSyncTest") for name in statuses), statuses
            ''',
            tags=("implementation", "plugin"),
        ),
    ]


STORE_GO = dedent("""
    package store

    import "sort"

    // Store keeps stock counts per item.
    type Store struct{ items map[string]int64 }

    // New returns an empty store.
    func New() *Store { return &Store{items: map[string]int64{}} }

    // Add adds count units of item.
    func (s *Store) Add(item string, count int64) { s.items[item] += count }

    // Count returns the units of item in stock.
    func (s *Store) Count(item string) int64 { return s.items[item] }

    // Total returns the units of all items.
    func (s *Store) Total() int64 {
    	var total int64
    	for _, n := range s.items {
    		total += n
    	}
    	return total
    }

    // Items returns the item names in order.
    func (s *Store) Items() []string {
    	names := make([]string, 0, len(s.items))
    	for k := range s.items {
    		names = append(names, k)
    	}
    	sort.Strings(names)
    	return names
    }
    """)
STORE_TEST = dedent("""
    package store

    import "testing"

    func TestAddCount(t *testing.T) {
    	s := New()
    	s.Add("bolt", 3)
    	s.Add("bolt", 4)
    	if s.Count("bolt") != 7 {
    		t.Fatalf("Count = %d", s.Count("bolt"))
    	}
    }

    func TestTotalLarge(t *testing.T) {
    	s := New()
    	s.Add("washer", 3_000_000_000)
    	s.Add("screw", 1)
    	if s.Total() != 3_000_000_001 {
    		t.Fatalf("Total = %d", s.Total())
    	}
    }

    func TestItemsSorted(t *testing.T) {
    	s := New()
    	s.Add("nut", 1)
    	s.Add("bolt", 1)
    	if got := s.Items(); len(got) != 2 || got[0] != "bolt" {
    		t.Fatalf("Items = %v", got)
    	}
    }
    """)
MAIN_GO = dedent("""
    package main

    import (
    	"fmt"
    	"os"

    	"example.com/inventory/store"
    )

    var version = "dev"

    func main() {
    	if len(os.Args) > 1 && os.Args[1] == "--version" {
    		fmt.Println(version)
    		return
    	}
    	s := store.New()
    	s.Add("bolt", 3)
    	fmt.Println("total", s.Total())
    }
    """)
GO_TESTS = ("TestAddCount", "TestTotalLarge", "TestItemsSorted")
GO_OFFLINE = "Go builds offline here (GOPROXY=off, standard library only)."


def _go_build(
    name: str, difficulty: str, instruction: str, broken: dict[str, str], fixed: dict[str, str], **kw: object
) -> TaskDraft:
    base = {
        "go.mod": go_mod("example.com/inventory"),
        "store/store.go": STORE_GO,
        "cmd/inventory/main.go": MAIN_GO,
    }
    tests = {"store/store_test.go": STORE_TEST, **kw.pop("more_tests", {})}  # type: ignore[dict-item]
    expected = (*GO_TESTS, *kw.pop("more_expected", ()))  # type: ignore[misc]
    return _build(name, "go", difficulty, instruction, {**base, **broken}, fixed, tests, expected, **kw)  # type: ignore[arg-type]


def go_tasks() -> list[TaskDraft]:
    """Five Go repairs (one per error type) and one implementation task."""
    total_int = STORE_GO.replace("var total int64\n", "var total int\n")
    range_int = STORE_GO.replace(
        "names := make([]string, 0, len(s.items))",
        "names := make([]string, 0, len(s.items))\n\tfor i := range 2 {\n\t\t_ = i\n\t}",
    )
    clamp_v10 = dedent("""
        package mathx

        // Clamp limits x to [lo, hi].
        func Clamp(x, lo, hi int64) int64 {
        	if x < lo {
        		return lo
        	}
        	if x > hi {
        		return hi
        	}
        	return x
        }
        """)
    clamp_v13 = clamp_v10 + dedent("""

        // Lerp is the point a fraction t of the way from a to b.
        func Lerp(a, b int64, t float64) int64 { return a + int64(float64(b-a)*t) }
        """)
    geo_go = dedent("""
        package geo

        import "example.com/mathx"

        // Midpoint is halfway between a and b.
        func Midpoint(a, b int64) int64 { return mathx.Lerp(a, b, 0.5) }
        """)
    limits_go = dedent("""
        package store

        import (
        	"example.com/geo"
        	"example.com/mathx"
        )

        // Capped returns the units of item, at most limit.
        func (s *Store) Capped(item string, limit int64) int64 {
        	return mathx.Clamp(s.Count(item), 0, limit)
        }

        // Reorder is the stock level that triggers a reorder: halfway to the limit.
        func (s *Store) Reorder(limit int64) int64 { return geo.Midpoint(0, limit) }
        """)
    limits_test = dedent("""
        package store

        import "testing"

        func TestCapped(t *testing.T) {
        	s := New()
        	s.Add("bolt", 50)
        	if s.Capped("bolt", 10) != 10 || s.Capped("nut", 10) != 0 || s.Reorder(10) != 5 {
        		t.Fatal("Capped or Reorder is wrong")
        	}
        }
        """)
    requires = "\nrequire (\n\texample.com/geo v0.1.0\n\texample.com/mathx v1.3.0\n)\n\n"
    conflict_mod = go_mod(
        "example.com/inventory",
        extra=requires + "replace example.com/geo => ./third_party/geo\n\n"
        "// pinned after the 1.3 upgrade broke the nightly build\n"
        "replace example.com/mathx => ./third_party/mathx-1.0\n",
    )
    resolved_mod = go_mod(
        "example.com/inventory",
        extra=requires
        + "replace example.com/geo => ./third_party/geo\n\n"
        + "replace example.com/mathx => ./third_party/mathx-1.3\n",
    )
    config_go = dedent("""
        package store

        import (
        	"os"

        	"github.com/pkg/errors"
        )

        // ErrNoConfig is wrapped by LoadConfig when the file is missing.
        var ErrNoConfig = os.ErrNotExist

        // LoadConfig reads the store's configuration file.
        func LoadConfig(path string) ([]byte, error) {
        	data, err := os.ReadFile(path)
        	if err != nil {
        		return nil, errors.Wrap(err, "load config")
        	}
        	return data, nil
        }
        """)
    config_fixed = config_go.replace('\t"os"\n\n\t"github.com/pkg/errors"\n', '\t"fmt"\n\t"os"\n').replace(
        'errors.Wrap(err, "load config")', 'fmt.Errorf("load config: %w", err)'
    )
    config_test = dedent("""
        package store

        import (
        	"errors"
        	"strings"
        	"testing"
        )

        func TestLoadConfigWrapsMissing(t *testing.T) {
        	_, err := LoadConfig("/nonexistent/inventory.conf")
        	if !errors.Is(err, ErrNoConfig) || !strings.HasPrefix(err.Error(), "load config: ") {
        		t.Fatalf("err = %v", err)
        	}
        }
        """)
    makefile = "VERSION ?= dev\n\nbuild:\n\tgo build -o bin/inventory ./cmd/inventory\n\n.PHONY: build\n"
    makefile_release = (
        "VERSION ?= dev\n\nbuild:\n\tgo build -o bin/inventory ./cmd/inventory\n\n"
        "release:\n\tmkdir -p dist\n"
        '\tgo build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" \\\n'
        "\t\t-o dist/inventory-linux-amd64 ./cmd/inventory\n\n"
        ".PHONY: build release\n"
    )
    return [
        _go_build(
            "go-compilation-error",
            "easy",
            f"""
            `go build ./...` fails in this Go module. Fix the compilation error so that the module
            builds and its tests pass; do not change the tests. {GO_OFFLINE}
            """,
            {"store/store.go": total_int},
            {"store/store.go": STORE_GO},
            tags=("compilation-error",),
        ),
        _go_build(
            "go-toolchain-mismatch",
            "medium",
            f"""
            This module was written for a newer Go than the one installed here (`go version`), and
            it does not build. Make it build and pass its tests with the installed Go, keeping its
            behaviour. {GO_OFFLINE}
            """,
            {"go.mod": go_mod("example.com/inventory", go="1.22"), "store/store.go": range_int},
            {"go.mod": go_mod("example.com/inventory"), "store/store.go": STORE_GO},
            tags=("toolchain-mismatch",),
            # the near-miss benchmark found that Go 1.19 builds a module whose go.mod still says 1.22
            # (or 1.21) once the code compiles: the mismatch is the directive too
            extra="""

            def test_go_directive_fits_the_installed_go(build):
                app, proc, statuses = build
                declared = next(line.split()[1] for line in (app / "go.mod").read_text().splitlines()
                                if line.startswith("go "))
                installed = run(["go", "env", "GOVERSION"], app).stdout.strip().removeprefix("go")
                version = lambda v: tuple(int(x) for x in v.split(".")[:2])
                assert version(declared) <= version(installed), f"go.mod: {declared}; installed: {installed}"
            """,
        ),
        _go_build(
            "go-dependency-conflict",
            "hard",
            f"""
            The module does not build: its dependencies disagree about the version of `mathx`
            (both versions are vendored in third_party/). Resolve the version conflict so that the
            module builds and passes its tests with its dependencies unchanged. {GO_OFFLINE}
            """,
            {
                "go.mod": conflict_mod,
                "third_party/mathx-1.0/go.mod": go_mod("example.com/mathx"),
                "third_party/mathx-1.0/clamp.go": clamp_v10,
                "third_party/mathx-1.3/go.mod": go_mod("example.com/mathx"),
                "third_party/mathx-1.3/clamp.go": clamp_v13,
                "third_party/geo/go.mod": go_mod(
                    "example.com/geo", extra="\nrequire example.com/mathx v1.3.0\n"
                ),
                "third_party/geo/geo.go": geo_go,
                "store/limits.go": limits_go,
            },
            {"go.mod": resolved_mod},
            more_tests={"store/limits_test.go": limits_test},
            more_expected=("TestCapped",),
            extra="""

            def test_dependencies_kept(build):
                app, proc, statuses = build
                deps = run(["go", "list", "-deps", "./..."], app).stdout.split()
                assert {"example.com/geo", "example.com/mathx"} <= set(deps), "a dependency was dropped"
                vendored = (app / "third_party/geo/geo.go").read_text()
                assert "mathx.Lerp" in vendored, "the vendored geo module was changed"
            """,
            tags=("dependency-conflict",),
        ),
        _go_build(
            "go-unavailable-dependency",
            "medium",
            f"""
            This module needs `github.com/pkg/errors`, which cannot be downloaded here and is not
            in any module cache. Make the module build and pass its tests without it, keeping
            LoadConfig's error behaviour (the message prefix and `errors.Is` on the cause).
            {GO_OFFLINE}
            """,
            {
                "go.mod": go_mod("example.com/inventory", extra="\nrequire github.com/pkg/errors v0.9.1\n"),
                "store/config.go": config_go,
            },
            {"go.mod": go_mod("example.com/inventory"), "store/config.go": config_fixed},
            more_tests={"store/config_test.go": config_test},
            more_expected=("TestLoadConfigWrapsMissing",),
            tags=("dependency-resource",),
            # the near-miss benchmark found a go.mod still requiring github.com/pkg/errors accepted
            # once no source imported it: the module's whole graph must resolve offline
            extra="""

            def test_module_graph_resolves_offline(build):
                app, proc, statuses = build
                graph = run(["go", "list", "-m", "all"], app)
                assert graph.returncode == 0, tail(graph)
            """,
        ),
        _go_build(
            "go-misconfigured-module",
            "easy",
            f"""
            `go build ./...` fails with "package ... is not in GOROOT" for this module's own
            packages. Find the misconfiguration and fix it without changing the Go sources.
            {GO_OFFLINE}
            """,
            {"go.mod": go_mod("example.com/inventry")},
            {"go.mod": go_mod("example.com/inventory")},
            tags=("misconfiguration",),
        ),
        _go_build(
            "go-release-target",
            "medium",
            f"""
            Add a `release` target to the Makefile. `make release VERSION=1.4.2` must build
            `./cmd/inventory` into `dist/inventory-linux-amd64`, stripped (`-s -w`), with the
            version injected into `main.version` by the linker, so that
            `dist/inventory-linux-amd64 --version` prints 1.4.2. Keep the `build` target.
            {GO_OFFLINE}
            """,
            {"Makefile": makefile},
            {"Makefile": makefile_release},
            extra="""

            def test_release_binary_reports_version():
                app = scratch_copy()
                made = run(["make", "release", "VERSION=1.4.2"], app)
                assert made.returncode == 0, tail(made)
                binary = app / "dist" / "inventory-linux-amd64"
                assert binary.is_file(), "no dist/inventory-linux-amd64"
                assert run([str(binary), "--version"], app).stdout.strip() == "1.4.2"
                assert run(["make", "build"], app).returncode == 0, "the build target broke"
            """,
            tags=("implementation", "release"),
        ),
    ]


def drafts() -> list[TaskDraft]:
    """Twelve build tasks: six Java, six Go."""
    return [*java_tasks(), *go_tasks()]
