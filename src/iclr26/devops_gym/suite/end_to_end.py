"""End-to-end tasks: in one repository, in sequence, (1) repair the build, (2) run the service and
diagnose its anomaly (a label in `report.txt`), (3) fix its cause in the code (gold tests), and
(4) write a regression test that fails on the faulty code and passes on the fixed code (checked
strictly, as in test generation). The task passes only if every stage does."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from iclr26.devops_gym.suite import TaskDraft, dedent
from iclr26.devops_gym.suite.code import _heredoc
from iclr26.devops_gym.suite.projects import go_mod, java_path, pom

TESTS = '''"""End to end: build repaired, anomaly diagnosed, cause fixed (gold tests), regression
test strict."""

import pytest
from checks import APP_DIR, TEST_DIR, go_test, maven, overlay, run, scratch_copy, surefire, tail

LANGUAGE = {language!r}
LABEL = {label!r}
GOLD = {gold!r}
SOURCE_TEST_GLOB = {test_glob!r}
REGRESSION = {regression!r}


def _run(app):
    if LANGUAGE == "go":
        return go_test(app)
    return maven(app, "test"), surefire(app)


def test_stage1_build_repaired():
    app = scratch_copy()
    proc = run(["go", "build", "./..."], app) if LANGUAGE == "go" else maven(app, "compile")
    assert proc.returncode == 0, tail(proc)


def test_stage2_anomaly_reported():
    report = APP_DIR / "report.txt"
    assert report.is_file(), "no report.txt"
    words = report.read_text().split()
    assert words and words[0].lower() == LABEL, f"reported {{words[:1]}}"


def test_stage3_cause_fixed():
    app = scratch_copy()
    overlay(TEST_DIR / "gold", app)
    proc, statuses = _run(app)
    assert statuses and all(statuses.get(n) == "passed" for n in GOLD), f"{{statuses}}\\n{{tail(proc)}}"


def _with_regression(source):
    app = scratch_copy()
    for old in app.glob(SOURCE_TEST_GLOB):
        old.unlink()
    overlay(TEST_DIR / source, app)
    (app / REGRESSION).write_text((APP_DIR / REGRESSION).read_text())
    proc, statuses = _run(app)
    assert statuses, f"the regression test did not run\\n{{tail(proc)}}"
    return statuses


def test_stage4_regression_test_strict():
    assert (APP_DIR / REGRESSION).is_file(), f"no regression test at {{REGRESSION}}"
    assert "failed" in _with_regression("faulty").values(), "the regression test passes on the faulty code"
    fixed = _with_regression("fixed")
    assert set(fixed.values()) == {{"passed"}}, f"the regression test fails on the fixed code: {{fixed}}"
'''

INSTRUCTION = """
This repository's service has a problem in production. Work through four stages, in order:

1. The build is broken. Repair it ({build_cmd} must succeed) without changing the tests.
2. Build and start the service ({run_cmd}), observe the running process with the usual tools
   (ps, top, free, lsof, /proc/<pid>/...), and write the anomaly you see as the first word of
   `report.txt`, one of: memory_leak, disk_leak, handle_exhaustion, cpu_spike, io_bottleneck,
   inefficient_sql, healthy. Stop the service afterwards.
3. Fix the cause of the anomaly in the source code. Hidden tests of the documented behaviour will
   be run.
4. Write a regression test in `{regression}` that fails on the code as it was (with the anomaly's
   cause) and passes on the fixed code.
{offline}
"""


@dataclass(frozen=True)
class Incident:
    """One end-to-end task's repository and its reference answers."""

    name: str
    language: str
    label: str
    difficulty: str
    files: dict[str, str]  # the repository as the agent finds it (build broken, fault present)
    build_fix: dict[str, str]
    source_path: str
    faulty: str
    fixed: str
    gold_path: str
    gold: str
    gold_names: tuple[str, ...]
    regression_path: str
    regression: str


def _draft(inc: Incident) -> TaskDraft:
    go = inc.language == "go"
    instruction = INSTRUCTION.format(
        build_cmd="`go build ./...`" if go else "`mvn -o -q package`",
        run_cmd="`go build -o bin/server ./cmd/server && ./bin/server &`"
        if go
        else "`mvn -o -q package -DskipTests && java -cp target/classes org.example.bus.Server &`",
        regression=inc.regression_path,
        offline="Builds are offline here: nothing can be downloaded.",
    )
    solution = "\n".join(
        [
            *(_heredoc(p, c) for p, c in inc.build_fix.items()),
            f"echo {inc.label} > report.txt",
            _heredoc(inc.source_path, inc.fixed),
            _heredoc(inc.regression_path, inc.regression),
        ]
    )
    return TaskDraft(
        name=inc.name,
        category="end_to_end",
        language=inc.language,
        difficulty=inc.difficulty,
        instruction=dedent(instruction),
        workspace={**inc.files, inc.source_path: inc.faulty},
        tests=TESTS.format(
            language=inc.language,
            label=inc.label,
            gold=list(inc.gold_names),
            test_glob="**/*_test.go" if go else "src/test/java/**/*.java",
            regression=inc.regression_path,
        ),
        test_files={
            f"gold/{inc.gold_path}": inc.gold,
            f"faulty/{inc.source_path}": inc.faulty,
            f"fixed/{inc.source_path}": inc.fixed,
        },
        solution=solution,
        tags=(inc.label,),
        agent_timeout_s=900.0,
        test_timeout_s=360.0,
    )


def _go_server(body: str, imports: str) -> str:
    """A Go `main` package with the given imports and body (both tab-indented here)."""
    imports = textwrap.indent(dedent(imports).strip("\n"), "\t")
    body = textwrap.indent(dedent(body).strip("\n"), "\t")
    return f"package main\n\nimport (\n{imports}\n)\n\nfunc main() {{\n{body}\n}}\n"


CATALOG_FAULTY = dedent("""
    package catalog

    import "fmt"

    // MaxEntries bounds the lookup cache: it holds at most this many entries.
    const MaxEntries = 1024

    // Catalog answers product lookups and caches the answers.
    type Catalog struct {
    	cache map[string][]byte
    	order []string
    }

    // New returns an empty catalog.
    func New() *Catalog { return &Catalog{cache: map[string][]byte{}} }

    // Lookup returns the record of a product id, computing it on a cache miss.
    func (c *Catalog) Lookup(id string) []byte {
    	if rec, ok := c.cache[id]; ok {
    		return rec
    	}
    	rec := make([]byte, 16*1024)
    	copy(rec, fmt.Sprintf("product %s", id))
    	c.cache[id] = rec
    	c.order = append(c.order, id)
    	return rec
    }

    // Len is the number of cached records.
    func (c *Catalog) Len() int { return len(c.cache) }
    """)
CATALOG_FIXED = CATALOG_FAULTY.replace(
    "\tc.cache[id] = rec\n\tc.order = append(c.order, id)\n",
    "\tif len(c.order) >= MaxEntries { // evict the oldest entry\n"
    "\t\tdelete(c.cache, c.order[0])\n\t\tc.order = c.order[1:]\n\t}\n"
    "\tc.cache[id] = rec\n\tc.order = append(c.order, id)\n",
)
LOGSHIP_FAULTY = dedent("""
    package logship

    import (
    	"bufio"
    	"os"
    )

    // Count returns the number of lines in the log file at path.
    func Count(path string) (int, error) {
    	f, err := os.Open(path)
    	if err != nil {
    		return 0, err
    	}
    	n := 0
    	sc := bufio.NewScanner(f)
    	for sc.Scan() {
    		n++
    	}
    	return n, sc.Err()
    }
    """)
LOGSHIP_FIXED = LOGSHIP_FAULTY.replace(
    "\t\treturn 0, err\n\t}\n", "\t\treturn 0, err\n\t}\n\tdefer f.Close()\n"
)

BUS_FAULTY = dedent("""
    package org.example.bus;

    import java.util.ArrayList;
    import java.util.List;
    import java.util.function.Consumer;

    /** Delivers events to subscribed listeners. A closed session no longer receives events. */
    public final class EventBus {
        private final List<Consumer<String>> listeners = new ArrayList<>();

        public void subscribe(Consumer<String> listener) {
            listeners.add(listener);
        }

        public void unsubscribe(Consumer<String> listener) {
            listeners.remove(listener);
        }

        public void publish(String event) {
            for (Consumer<String> l : listeners) {
                l.accept(event);
            }
        }

        public int listenerCount() {
            return listeners.size();
        }

        /** A client session: subscribes on open, and must unsubscribe on close. */
        public final class Session implements AutoCloseable {
            private final byte[] buffer = new byte[64 * 1024];
            private final Consumer<String> listener = e -> buffer[0] = (byte) e.length();

            public Session() {
                subscribe(listener);
            }

            @Override
            public void close() {
            }
        }
    }
    """)
BUS_FIXED = BUS_FAULTY.replace(
    "        public void close() {\n        }",
    "        public void close() {\n            unsubscribe(listener);\n        }",
)
BUS_SERVER = dedent("""
    package org.example.bus;

    public final class Server {
        public static void main(String[] args) throws InterruptedException {
            EventBus bus = new EventBus();
            long n = 0;
            while (true) {
                try (EventBus.Session s = bus.new Session()) {
                    bus.publish("order " + n++);
                }
                if (n % 100 == 0) {
                    Thread.sleep(50);
                }
            }
        }
    }
    """)


def incidents() -> list[Incident]:
    """Three incidents: a Go memory leak, a Go descriptor leak, a Java listener leak."""
    catalog_main = _go_server(
        """
        c := catalog.New()
        for i := 0; ; i++ {
        	c.Lookup(fmt.Sprintf("sku-%d", i))
        	if i%200 == 0 {
        		time.Sleep(20 * time.Millisecond)
        	}
        }
        """,
        """
        "fmt"
        "time"

        "example.com/catalog/catalog"
        """,
    )
    broken_catalog_main = catalog_main.replace('\t"fmt"\n', '\t"fmt"\n\t"strings"\n')
    logship_main = _go_server(
        """
        path := "var/shipped.log"
        os.MkdirAll("var", 0o755)
        os.WriteFile(path, []byte("a\\nb\\nc\\n"), 0o644)
        for {
        	if _, err := logship.Count(path); err != nil {
        		log.Println("count:", err)
        	}
        	time.Sleep(5 * time.Millisecond)
        }
        """,
        """
        "log"
        "os"
        "time"

        "example.com/logship/logship"
        """,
    )
    return [
        Incident(
            name="go-catalog-cache",
            language="go",
            label="memory_leak",
            difficulty="hard",
            files={
                "go.mod": go_mod("example.com/catalog"),
                "cmd/server/main.go": broken_catalog_main,
                "catalog/catalog_test.go": dedent("""
                    package catalog

                    import "testing"

                    func TestLookupCaches(t *testing.T) {
                    	c := New()
                    	a, b := c.Lookup("x"), c.Lookup("x")
                    	if &a[0] != &b[0] {
                    		t.Fatal("the second lookup did not hit the cache")
                    	}
                    }
                    """),
            },
            build_fix={"cmd/server/main.go": catalog_main},
            source_path="catalog/catalog.go",
            faulty=CATALOG_FAULTY,
            fixed=CATALOG_FIXED,
            gold_path="catalog/catalog_gold_test.go",
            gold=dedent("""
                package catalog

                import (
                	"fmt"
                	"testing"
                )

                func TestCacheBounded(t *testing.T) {
                	c := New()
                	for i := 0; i < 5*MaxEntries; i++ {
                		c.Lookup(fmt.Sprint(i))
                	}
                	if c.Len() > MaxEntries {
                		t.Fatalf("the cache holds %d entries, more than %d", c.Len(), MaxEntries)
                	}
                }
                """),
            gold_names=("TestCacheBounded", "TestLookupCaches"),
            regression_path="catalog/regression_test.go",
            regression=dedent("""
                package catalog

                import (
                	"fmt"
                	"testing"
                )

                func TestCacheDoesNotGrowWithoutBound(t *testing.T) {
                	c := New()
                	for i := 0; i < MaxEntries+10; i++ {
                		c.Lookup(fmt.Sprintf("id-%d", i))
                	}
                	if c.Len() > MaxEntries {
                		t.Fatalf("Len = %d", c.Len())
                	}
                }
                """),
        ),
        Incident(
            name="go-logship-descriptors",
            language="go",
            label="handle_exhaustion",
            difficulty="hard",
            files={
                "go.mod": go_mod("example.com/logshp"),
                "cmd/server/main.go": logship_main,
                "logship/logship_test.go": dedent("""
                    package logship

                    import (
                    	"os"
                    	"path/filepath"
                    	"testing"
                    )

                    func TestCount(t *testing.T) {
                    	path := filepath.Join(t.TempDir(), "x.log")
                    	os.WriteFile(path, []byte("1\\n2\\n"), 0o644)
                    	if n, err := Count(path); err != nil || n != 2 {
                    		t.Fatalf("Count = %d, %v", n, err)
                    	}
                    }
                    """),
            },
            build_fix={"go.mod": go_mod("example.com/logship")},
            source_path="logship/logship.go",
            faulty=LOGSHIP_FAULTY,
            fixed=LOGSHIP_FIXED,
            gold_path="logship/logship_gold_test.go",
            gold=dedent("""
                package logship

                import (
                	"os"
                	"path/filepath"
                	"testing"
                )

                func openFiles(t *testing.T) int {
                	entries, err := os.ReadDir("/proc/self/fd")
                	if err != nil {
                		t.Skip("no /proc")
                	}
                	return len(entries)
                }

                func TestCountClosesTheFile(t *testing.T) {
                	path := filepath.Join(t.TempDir(), "x.log")
                	os.WriteFile(path, []byte("1\\n"), 0o644)
                	before := openFiles(t)
                	for i := 0; i < 200; i++ {
                		Count(path)
                	}
                	if after := openFiles(t); after > before+5 {
                		t.Fatalf("%d descriptors left open", after-before)
                	}
                }
                """),
            gold_names=("TestCountClosesTheFile", "TestCount"),
            regression_path="logship/regression_test.go",
            regression=dedent("""
                package logship

                import (
                	"os"
                	"path/filepath"
                	"testing"
                )

                func TestNoDescriptorLeak(t *testing.T) {
                	path := filepath.Join(t.TempDir(), "y.log")
                	os.WriteFile(path, []byte("z\\n"), 0o644)
                	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
                	before := fds()
                	for i := 0; i < 100; i++ {
                		Count(path)
                	}
                	if fds() > before+3 {
                		t.Fatal("Count leaks file descriptors")
                	}
                }
                """),
        ),
        Incident(
            name="java-eventbus-listeners",
            language="java",
            label="memory_leak",
            difficulty="hard",
            files={
                "pom.xml": pom("eventbus", release="21"),
                java_path("org.example.bus", "Server"): BUS_SERVER,
                java_path("org.example.bus", "EventBusTest", test=True): dedent("""
                    package org.example.bus;

                    import static org.junit.jupiter.api.Assertions.assertEquals;

                    import org.junit.jupiter.api.Test;

                    class EventBusTest {
                        @Test
                        void deliversToOpenSessions() {
                            EventBus bus = new EventBus();
                            int[] seen = {0};
                            bus.subscribe(e -> seen[0]++);
                            bus.publish("a");
                            assertEquals(1, seen[0]);
                        }
                    }
                    """),
            },
            build_fix={"pom.xml": pom("eventbus")},
            source_path=java_path("org.example.bus", "EventBus"),
            faulty=BUS_FAULTY,
            fixed=BUS_FIXED,
            gold_path=java_path("org.example.bus", "EventBusGoldTest", test=True),
            gold=dedent("""
                package org.example.bus;

                import static org.junit.jupiter.api.Assertions.assertEquals;

                import org.junit.jupiter.api.Test;

                class EventBusGoldTest {
                    @Test
                    void closedSessionsUnsubscribe() {
                        EventBus bus = new EventBus();
                        for (int i = 0; i < 100; i++) {
                            bus.new Session().close();
                        }
                        assertEquals(0, bus.listenerCount());
                    }
                }
                """),
            gold_names=("EventBusGoldTest.closedSessionsUnsubscribe", "EventBusTest.deliversToOpenSessions"),
            regression_path=java_path("org.example.bus", "SessionLeakRegressionTest", test=True),
            regression=dedent("""
                package org.example.bus;

                import static org.junit.jupiter.api.Assertions.assertEquals;

                import org.junit.jupiter.api.Test;

                class SessionLeakRegressionTest {
                    @Test
                    void closingASessionRemovesItsListener() {
                        EventBus bus = new EventBus();
                        EventBus.Session s = bus.new Session();
                        s.close();
                        assertEquals(0, bus.listenerCount());
                    }
                }
                """),
        ),
    ]


def drafts() -> list[TaskDraft]:
    """Three end-to-end tasks."""
    return [_draft(i) for i in incidents()]
