"""Each run file's whole config and latest summary for the run filter (``leet.sources.run_facts``), on real runs."""

from __future__ import annotations

import os
import shutil

from test_workspace import wait_for

from leet.sources import run_facts
from leet.sources.run_facts import FactsBook


def test_a_finished_run_gives_its_config_and_its_last_summary(basic_run):
    book = FactsBook()
    assert book.facts(basic_run.wandb_path) is None, "nothing before the first read"
    assert book.poll([basic_run.wandb_path])
    facts = book.facts(basic_run.wandb_path)
    assert facts is not None
    assert facts.config == basic_run.config
    assert facts.summary["best_acc"] == 0.875 and facts.summary["loss"] == 0.125, "the summary's overrides win over the last logged step"
    assert not book.poll([basic_run.wandb_path]), "an unchanged file is not read again"


def test_a_large_file_is_read_in_parts_to_the_same_facts(basic_run, monkeypatch):
    whole = FactsBook()
    whole.poll([basic_run.wandb_path])
    monkeypatch.setattr(run_facts, "RECORDS_PER_POLL", 50)
    book = FactsBook()
    book.poll([basic_run.wandb_path])
    assert book.unfinished, "the first part stops short of the end"
    while book.unfinished:
        book.poll([basic_run.wandb_path])
    assert book.facts(basic_run.wandb_path) == whole.facts(basic_run.wandb_path)


def test_a_live_run_s_summary_is_read_on_as_its_file_grows(live_run):
    live = live_run(seconds=60.0)
    book = FactsBook()
    wait_for(lambda: book.poll([live.wandb_path]) and "_step" in book.facts(live.wandb_path).summary, "a first summary")
    first = book.facts(live.wandb_path).summary["_step"]
    wait_for(lambda: book.poll([live.wandb_path]) and book.facts(live.wandb_path).summary["_step"] > first, "a later step in the summary")


def test_a_replaced_file_is_read_anew_and_a_file_no_longer_listed_is_forgotten(basic_run, tmp_path):
    file = tmp_path / basic_run.wandb_path.name
    shutil.copyfile(basic_run.wandb_path, file)
    book = FactsBook()
    book.poll([file])
    assert book.facts(file).summary["best_acc"] == 0.875
    head = tmp_path / "head.wandb"
    head.write_bytes(basic_run.wandb_path.read_bytes()[:4096])  # the run record, no summary yet
    os.replace(head, file)
    assert book.poll([file])
    assert book.facts(file).config == basic_run.config and "best_acc" not in book.facts(file).summary
    book.poll([])
    assert book.facts(file) is None
