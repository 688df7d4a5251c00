"""Project skeletons the tasks start from: a Maven pom that builds offline, and a Go module."""

from __future__ import annotations

from iclr26.devops_gym.toolchains import JUNIT_VERSION, PLUGIN_VERSIONS


def pom(
    artifact: str,
    *,
    release: str = "17",
    api_version: str = JUNIT_VERSION,
    engine_version: str = JUNIT_VERSION,
    build_extra: str = "",
    surefire_config: str = "",
) -> str:
    """A pom.xml for `org.example:<artifact>` with every plugin pinned (Maven's defaults are not
    in the offline repository) and JUnit Jupiter's API and engine at the given versions."""
    plugins = []
    for name, version in PLUGIN_VERSIONS.items():
        config = surefire_config if name == "maven-surefire-plugin" else ""
        plugins.append(
            f"""      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>{name}</artifactId>
        <version>{version}</version>{config}
      </plugin>"""
        )
    plugin_xml = "\n".join(plugins)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example</groupId>
  <artifactId>{artifact}</artifactId>
  <version>1.0.0</version>
  <packaging>jar</packaging>

  <properties>
    <maven.compiler.release>{release}</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>

  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter-api</artifactId>
      <version>{api_version}</version>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter-engine</artifactId>
      <version>{engine_version}</version>
      <scope>test</scope>
    </dependency>
  </dependencies>

  <build>{build_extra}
    <plugins>
{plugin_xml}
    </plugins>
  </build>
</project>
"""


def go_mod(module: str, go: str = "1.19", extra: str = "") -> str:
    """A go.mod for `module` at language version `go`."""
    return f"module {module}\n\ngo {go}\n{extra}"


def java_path(package: str, cls: str, test: bool = False) -> str:
    """`src/main/java/org/example/pkg/Cls.java` (or under src/test)."""
    root = "src/test/java" if test else "src/main/java"
    return f"{root}/{package.replace('.', '/')}/{cls}.java"
