"""The Flare writer's ``full_prompts`` option: request bodies with prompt text of realistic
length (issue 9's benchmark packets), still a valid packet, and no change to the default.

The default packet's bytes are also pinned by
``tests/fixtures_writer/test_writer.py::test_the_default_packet_of_the_bundled_spec_is_byte_for_byte_unchanged``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from packet_tree import tree_digest

from flarespec.fixtures.writers import write_pair, write_packet

CHARACTERS_PER_TOKEN = 4  # " abc": the writer's word per prompt token


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def prompts(root: Path) -> dict[str, str]:
    """Request id -> prompt text of every request body below ``root``."""
    return {body.parent.name: json.loads(body.read_bytes())["prompt"]
            for body in root.glob("run/*/*/request.json")}


def test_a_full_prompt_pair_passes_measure(tmp_path, flare_spec):
    baseline, candidate = write_pair(tmp_path / "packets", flare_spec, full_prompts=True)
    receipt = tmp_path / "receipt.json"
    completed = subprocess.run(
        [sys.executable, "-m", "flarespec", "measure", "--packet", str(baseline), "--peer",
         str(candidate), "--output", str(receipt), "--quiet"],
        capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(receipt.read_text())["status"] == "pass"


def test_full_prompts_lengthen_each_prompt_by_four_characters_a_token(tmp_path, flare_spec):
    short = write_packet(tmp_path / "short", flare_spec).parent
    full = write_packet(tmp_path / "full", flare_spec, full_prompts=True).parent
    corpus = json.loads((short / "corpus.json").read_bytes())
    tokens = {r["id"]: r["prompt_token_count"] for g in corpus["groups"] for r in g["requests"]}
    short_prompts, full_prompts = prompts(short), prompts(full)
    assert short_prompts.keys() == full_prompts.keys() == tokens.keys()
    for request_id, text in short_prompts.items():
        assert full_prompts[request_id].startswith(text)
        assert len(full_prompts[request_id]) == len(text) + CHARACTERS_PER_TOKEN * tokens[request_id]


def test_full_prompts_change_only_the_bodies_and_the_digests_that_bind_them(tmp_path, flare_spec):
    short = files(write_packet(tmp_path / "short", flare_spec).parent)
    full = files(write_packet(tmp_path / "full", flare_spec, full_prompts=True).parent)
    assert short.keys() == full.keys()
    changed = {Path(name).name for name in short if short[name] != full[name]}
    assert changed == {"request.json", "corpus.json", "observation.json", "measurements.json",
                       "packet.json"}
    bodies = [name for name in short if name.endswith("request.json")]
    assert sum(map(len, (full[b] for b in bodies))) > 10 * sum(map(len, (short[b] for b in bodies)))


def test_a_shared_token_prefix_is_a_shared_text_span(tmp_path, flare_spec, flare_constants):
    prefix = flare_constants["prefix"]
    root = write_packet(tmp_path / "full", flare_spec, full_prompts=True).parent
    corpus = json.loads((root / "corpus.json").read_bytes())
    first = {g["kind"]: g["requests"][0] for g in corpus["groups"] if g["repetition"] == 0}
    texts = prompts(root)
    seed, hit = (first[prefix[kind]] for kind in ("seed_kind", "hit_kind"))
    # the token words are the prompt's last 4 characters per token
    seed_words, hit_words = (texts[r["id"]][-CHARACTERS_PER_TOKEN * r["prompt_token_count"]:]
                             for r in (seed, hit))
    span = CHARACTERS_PER_TOKEN * prefix["tokens"]
    assert seed_words[:span] == hit_words[:span]
    assert seed_words[span:] != hit_words[span:]


def test_full_prompts_off_is_the_default_packet(tmp_path, flare_spec):
    default = write_packet(tmp_path / "default", flare_spec).parent
    explicit = write_packet(tmp_path / "explicit", flare_spec, full_prompts=False).parent
    assert tree_digest(default) == tree_digest(explicit)
