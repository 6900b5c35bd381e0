"""The compose files as a Compose implementation reads them: `podman-compose config`
(PyPI, in .venv-deploy: deploy/setup-deploy-tools.sh) renders `compose.yaml`, and
`compose.yaml` + `scale.yaml`, and the rendered services are the ones docs/getting-started/compose.md
describes. Rendering needs no container engine; where podman is missing, podman-compose
is shown a stand-in that only tells its version."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose"
PODMAN_COMPOSE = ROOT / ".venv-deploy" / "bin" / "podman-compose"
VERSION_ONLY = "#!/bin/sh\necho 'podman version 4.3.1'\n"


def render(folder: Path, tmp_path: Path, *files: str) -> dict:
    """The merged, interpolated project, as podman-compose prints it."""
    assert PODMAN_COMPOSE.exists(), "run deploy/setup-deploy-tools.sh (tests/run.sh does)"
    env = tmp_path / "test.env"
    example = (COMPOSE / "env.example").read_text()
    env.write_text(example.replace("BOT_PICKLE_KEY=\n", "BOT_PICKLE_KEY=" + "k" * 32 + "\n"))
    podman = shutil.which("podman")
    if podman is None:
        podman = str(tmp_path / "podman")
        Path(podman).write_text(VERSION_ONLY)
        Path(podman).chmod(0o755)
    args = [str(PODMAN_COMPOSE), "--podman-path", podman, "--env-file", str(env)]
    for name in files:
        args += ["-f", name]
    done = subprocess.run([*args, "config"], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return yaml.safe_load(done.stdout)


def gpus(service: dict) -> list[list[str]]:
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    return [device["device_ids"] for device in devices]


def test_the_stack_renders_with_the_services_the_readme_names(tmp_path):
    services = render(COMPOSE, tmp_path, "compose.yaml")["services"]
    assert set(services) == {"synapse", "chroma", "vllm", "bot"}
    assert services["bot"]["image"] == "knowledge-bot:latest"
    assert gpus(services["vllm"]) == [["0"]]
    assert services["bot"]["volumes"][0].endswith(":/config:ro")


def test_the_scale_out_renders_two_replicas_on_two_gpus_a_standby_and_workers(tmp_path):
    services = render(COMPOSE, tmp_path, "compose.yaml", "scale.yaml")["services"]
    assert set(services) == {
        "synapse",
        "chroma",
        "vllm",
        "vllm-2",
        "llm",
        "postgres",
        "bot",
        "bot-standby",
        "knowledge-api",
    }
    assert services["vllm-2"]["image"] == services["vllm"]["image"]
    assert services["vllm-2"]["command"] == services["vllm"]["command"]
    assert (gpus(services["vllm"]), gpus(services["vllm-2"])) == ([["0"]], [["1"]])
    for name in ("bot", "bot-standby", "knowledge-api"):
        assert services[name]["environment"]["POSTGRES_PASSWORD"] == "change-me"
        # Each refuses to start on its own SQLite files (core/config/load.py).
        assert services[name]["environment"]["KNOWLEDGE_BOT_PROCESSES"] == "several"
    assert "postgres" in services["bot"]["depends_on"]
    assert "postgres" in services["knowledge-api"]["depends_on"]
    assert "bot" in services["bot-standby"]["depends_on"]
    assert services["bot"]["ports"] and "ports" not in services["bot-standby"]


@pytest.mark.parametrize(
    "breakage",
    [
        # The old scale file's `extends` named a service of its own file, not compose.yaml's.
        ("  vllm-2:\n", "  vllm-2:\n    extends:\n      service: vllm\n"),
        ("POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?", "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD"),
    ],
    ids=["extends within the file", "unbalanced variable"],
)
def test_a_broken_scale_file_fails_the_render(tmp_path, breakage):
    folder = tmp_path / "compose"
    shutil.copytree(COMPOSE, folder)
    scale = folder / "scale.yaml"
    old, new = breakage
    assert old in scale.read_text()
    scale.write_text(scale.read_text().replace(old, new, 1))
    with pytest.raises(AssertionError):
        services = render(folder, tmp_path, "compose.yaml", "scale.yaml")["services"]
        assert "image" in services["vllm-2"] and gpus(services["vllm-2"]) == [["1"]]
