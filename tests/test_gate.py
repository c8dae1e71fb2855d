"""The recall gate's pieces, in isolation: prompt shape, everyday vocabulary, verdicts.

The end-to-end behaviour (quiet on everyday requests, speaks on memory cues) is in
tests/test_recall_quality.py; these pin the rules one at a time, with the reasons a user
reads in the recall log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memrecall.gate import NEEDS, generic_keys, judge, load_generic, prompt_shape
from memrecall.indexer import alias_groups
from memrecall.keywords import Keyword
from memrecall.resources import shipped_generic
from memrecall.search import Evidence, Hit, load_synonyms


@pytest.mark.parametrize(
    "prompt",
    [
        "決済のタイムアウトって前に何秒にしたっけ？",
        "在庫同期の件、どうなった？",
        "結局 Karpenter に移行したんだっけ",
        "what did we decide about the retry policy?",
        "remind me how we fixed the flaky login test",
        "Did we ever pin the terraform provider?",
        "last time the deploy failed because of the cache",
        "we hit this timeout before, what was the fix?",
        "I think I noted this before: how do I get the caller's line number?",
        "PAY-1234 の件、どうなった？",
        # Any past event is a topic ("…ちゃった件"), and so is asking what something was.
        "古いデータで上書きしちゃった件、原因なんだった？",
        "ビルドが落ちた件って誰か見てる？",
        "Slack 通知が二重に飛んだ原因、何だった？",
        "I once wrote a wrapper for this, where is it?",
        "we once had the same deadlock in the worker pool",
        "mol_run.go:130 で panic が出た。これ既知のやつ？",
        "ビルドが Windows だけ落ちる。既知の問題かな",
        "Is this a known issue? The export hangs on Windows.",
        "Was that a known bug in v2?",
        "After the cut-over, when were we planning to delete the old index?",
        "古いインデックスはいつ消す予定だった？",
        # Remembering is a cue when someone remembers, or is asked to.
        "I remember the logger itself was dropping repeated lines.",
        "あのときのロック、覚えてる?",
        "決済のタイムアウト何秒だったか覚えてますか",
        "リトライ回数って何回に決めた?",
        "ブランチ戦略は決めてあったはず",
        "一週間前に直したバグがまた出た?",
        "ずっと前に書いたスクリプトどこ?",
        "3日前に入れた設定がもう効いてない",
        "半年前に消したジョブが動いてる",
        "数ヶ月前に入れたリトライ設定が効いてない",
        "方針はどう決まった?",
        "例の件、どうなった",
        "メモに書いた手順で直したい",
        "メモしてた手順ってどれ?",
        "結局どうした?",
        "Do you remember the fix for the stale lock?",
        "remember when the export broke on Windows?",
        # What was decided, asked after a Japanese sentence that opens with a command's name.
        "import の途中で Ctrl+C しても壊れないようにする対応って、どういう方針だった？",
        "キャッシュの無効化はどんな設計だった?",
        # Whether a tracker holds it.
        "last-touched を doctor で検出して直す話、issue になってた?",
        "リトライ回数の件ってチケットに上がってる？",
    ],
)
def test_memory_cues_make_a_cue_prompt(prompt: str) -> None:
    assert prompt_shape(prompt) == "cue"


@pytest.mark.parametrize(
    "prompt",
    [
        "この関数のユニットテストを書いて",
        "ここでエラーになる理由を調べて",
        "ログをもう少し詳しく出すようにして",
        "add a unit test for the empty-list case",
        "make the logging more detailed",
        "why does this test fail?",
        "Please rename the variable to something clearer",
        # Words that only look like cues: a plan ("before I open the PR"), a count (件数).
        "Can you review this diff and point out anything risky before I open the PR?",
        "このJSONファイルを読み込んで、キーごとの件数を集計するスクリプトを書いて",
        "この画面の件名の表示を直して",
        # The order may come in a later sentence, or as a question anywhere in the prompt.
        "build_report is slow on 100k rows. Profile it and suggest a fix.",
        "The signup mail goes out twice; could you add a guard against that?",
        "Timestamps show up in UTC. Display them in the browser's time zone.",
        "The email sender is slow in tests; mock it please",
        "We need to paginate the articles endpoint with a cursor",
        # A Japanese order may end any sentence, and context may follow it.
        "`formatRelative` のテストを書いてください。「3分前」「昨日」の境界も。",
        "この手順を docs/setup.md にまとめてほしいです。Docker Compose 前提で。",
        "Storybook を 8 に上げる手順を順番に教えてください。addon も古いです。",
        # "Remember the choice", "force a redirect": orders about the code at hand.
        "add a dark-mode toggle and remember the choice in localStorage",
        "最後に選んだフィルタを localStorage に覚えておくようにして",
        "ログイン状態を覚えて",
        "命名規則を決めてください",
        # The casual asks.
        "ポートの設定を見てくれる?",
        "このテスト直してくれない?",
        "ログを整形してもらえる?",
        # "どうしたら" asks what to do; "この件" is the matter at hand.
        "このエラー、どうしたらいい?",
        "この件について調べて",
        "On the issue list page, remember the last selected filter in localStorage.",
        "The ingress still answers plain HTTP. Force a redirect to HTTPS for that host.",
        # A dash or an adverb before the order, and the verbs less often ordered with.
        "CI fails with ModuleNotFoundError: No module named 'yaml' - add PyYAML to the deps",
        "Checkout is slow — cache the product lookups for a minute",
        "In NoteCard.vue, only render the tag chips when tags is a non-empty array.",
        "Put an LRU cache in front of productRepo.FindByID",
        "Our request logging dumps the whole body. Redact any field named password.",
        "Add テスト for the parser",
        # The casual て-form orders.
        "docker compose で api が DB より先に立ち上がって落ちる。待ち合わせを入れて",
        "長い関数を二つに分けて",
        "設定値は環境変数から読んで",
        # Pasted code or output is the material at hand.
        "ステージングで Pod が起動しません。\n```\nWarning  Failed  12s  kubelet  Error\n```",
    ],
)
def test_requests_about_the_code_at_hand_are_code_prompts(prompt: str) -> None:
    assert prompt_shape(prompt) == "code"


@pytest.mark.parametrize(
    "prompt",
    [
        "force-unlock したときの手順",
        "redirect_uri が空になる",
        # A decision still to make is no memory of one.
        "エラーが 200 件出た。ディレクトリごとに集計して、どこから直すか決めたい。",
        # 前 inside a word or "before doing" is no "before now"; "決まった" before a noun is
        # "fixed".
        "変数の名前にプレフィックスを付けたい",
        "デプロイの事前にチェックを走らせたい",
        "コミットする直前に lint を流したい",
        "午前に実行されるジョブが重い",
        "デプロイの前にテストを流したい",
        "アップロードが 5MB を超えたら、送信前にエラーを出すように",
        "マージ前に lint が通るか確かめたい",
        "本番デプロイ前にスモークテストを回す手順",
        "リリース前にチェンジログを更新する運用",
        "commit前に format をかける仕組み",
        "決まった時間にジョブを走らせたい",
        "決まった形式でログを出したい",
        # An example to follow, an app to build, an old-fashioned way: no memory.
        "例のようにテーブル駆動で書きたい",
        "メモを取るアプリの API を設計したい",
        "昔ながらの書き方をやめたい",
        # A complaint, not an ask.
        "サーバーが起動してくれない。",
        # An English command opening a Japanese sentence names the command; no order.
        "import の途中で Ctrl+C したら DB が壊れる",
        "キャッシュの無効化はどういう方針がいい?",
        # A job that resumes where it stopped is the system at hand.
        "外部 API との同期ジョブが途中で落ちたとき、続きから再開できるようにしたい",
        "取り込みが途中で止まったら続きから読み込ませたい",
        "build が毎回 3 分かかる",
    ],
)
def test_a_command_a_name_or_a_decision_to_make_is_no_order_nor_cue(prompt: str) -> None:
    assert prompt_shape(prompt) not in ("code", "cue")


@pytest.mark.parametrize(
    "prompt",
    [
        "前回と同じエラーがまた出た。原因わかる？",
        "the nightly import failed again, is it the same lock timeout as previously?",
        "デプロイがまた落ちた",
        "did the earlier fix for the retry storm ever land?",
        "what was the fix for the lock timeout?",
        "we found a race in the exporter, where was it?",
        "Wasn't a leftover lock the cause?",
        "SRCH-322 の続きやりたい",
        "昨日の続きから始めたい",
    ],
)
def test_a_weak_cue_without_an_order_asks_about_the_past(prompt: str) -> None:
    assert prompt_shape(prompt) == "cue"


@pytest.mark.parametrize(
    "prompt",
    [
        # "前回", "again", "previous" describe the system here; the prompt gives an order.
        "Kubernetes の CronJob が、前回の実行が終わってないのに次が始まる。重ならないようにして",
        "After a crash the server won't start again. Find what holds the port and fix it.",
        "The page shows the previous user's cart; please clear it on logout",
        "以前の形式の設定ファイルも読めるようにしてください",
        # So do the past tense and "that issue" when the prompt gives an order about them.
        "fix that issue with the header overlap",
        "we had a flaky test in CI, make it deterministic",
        "We decided to use Redis for sessions; set up the client",
    ],
)
def test_a_weak_cue_with_an_order_is_a_work_order(prompt: str) -> None:
    assert prompt_shape(prompt) == "code"


@pytest.mark.parametrize(
    "prompt",
    [
        "test_shutdown hangs forever on my machine. Find out what it waits on.",
        "`make build` rebuilds everything. Figure out why.",
        "Memory grows every hour; track down the leak",
    ],
)
def test_find_out_and_track_down_are_orders(prompt: str) -> None:
    assert prompt_shape(prompt) == "code"


def test_new_and_old_are_everyday_words() -> None:
    from memrecall.keywords import Keyword
    from memrecall.resources import shipped_generic

    vocabulary = load_generic([shipped_generic()])
    words = [Keyword(w, "word", "word", "regex") for w in ("new", "old", "older", "alias")]
    assert generic_keys(words, vocabulary) == {"new", "old", "older"}


def test_known_in_a_work_order_is_no_memory_cue() -> None:
    assert prompt_shape("既知の脆弱性をスキャンする CI を追加して") == "code"


@pytest.mark.parametrize(
    "prompt",
    [
        "初期化に 15 秒のタイムアウトを付けて、超えたらエラーで終了させて",
        "ワーカーを 4 並列で動かさせて。",
        "失敗したジョブは Slack に通知させてください",
    ],
)
def test_a_causative_order_is_a_work_order(prompt: str) -> None:
    assert prompt_shape(prompt) == "code"


def test_a_verb_backs_a_cue_but_never_fires_alone() -> None:
    topic = _ev("実行", 0.5)
    symptom = Evidence("落ちる", "predicate", 1.0, 0.8, 3, False)
    # A topic alone falls short of a cue's bar; with the symptom the user describes it passes.
    assert not judge(_hit(topic), "cue", set(), 9.0, 2.0, 1).fire
    assert judge(_hit(topic, symptom), "cue", {"落ちる"}, 9.0, 2.0, 1).fire
    # The verb alone, or in a question that is no memory cue, stays everyday.
    assert not judge(_hit(symptom), "cue", {"落ちる"}, 9.0, 2.0, 1).fire
    assert not judge(_hit(topic, symptom), "plain", {"落ちる"}, 9.0, 2.0, 1).fire


def test_a_word_matched_only_through_a_dictionary_gloss_ranks_but_never_fires() -> None:
    # 展開 → "extraction" (JMdict): a memory holding "extraction" is as likely about anything.
    topic = _ev("lambda", 0.75)
    as_synonym = Evidence("展開", "noun", 0.8, 0.95, 3, True)
    as_gloss = Evidence("展開", "noun", 0.8, 0.95, 3, True, gloss=True)
    assert judge(_hit(topic, as_synonym), "plain", set(), 9.0, 2.0, 1).fire
    verdict = judge(_hit(topic, as_gloss), "plain", set(), 9.0, 2.0, 1)
    assert not verdict.fire and verdict.specific == ["lambda"]
    assert "展開 matched only through the dictionary" in verdict.reason  # the log says why
    # Even a memory cue: glosses alone are never what makes a memory fire.
    alone = judge(_hit(as_gloss), "cue", set(), 9.0, 2.0, 1)
    assert not alone.fire and "展開 matched only in English" in alone.reason


@pytest.mark.parametrize(
    "prompt", ["Kafka の consumer lag が増える原因は？", "how does the payment retry work?"]
)
def test_other_questions_are_plain(prompt: str) -> None:
    assert prompt_shape(prompt) == "plain"


@pytest.mark.parametrize(
    "prompt",
    [
        "Dockerfile の中で条件分岐したい",
        "通知メールの送信を同期処理から外したいです。今は API の中で SMTP を叩いています。",
        "在庫数をリアルタイムで出したいのですが、WebSocket と SSE のどちらがいいですか",
    ],
)
def test_a_wish_is_its_own_shape(prompt: str) -> None:
    assert prompt_shape(prompt) == "wish"


def test_a_wish_needs_code_evidence_unless_a_title_says_just_that() -> None:
    two = _hit(_ev("kafka", 0.75), _ev("lag", 0.75))  # evidence 1.5: a question's worth
    assert judge(two, "plain", set(), 9.0, 2.0, 1).fire
    assert not judge(two, "wish", set(), 9.0, 2.0, 1).fire
    # "Dockerfile の中で条件分岐したい" and the note titled with just that.
    covered = _hit(_ev("条件分岐", 0.9, head=True), _ev("dockerfile"), coverage=1.0)
    assert judge(covered, "wish", {"dockerfile"}, 9.0, 2.0, 1).fire


def test_a_memory_matching_a_sliver_of_a_long_prompt_stays_quiet() -> None:
    strong = (_ev("kafka", 1.0), _ev("lag", 1.0), _ev("partition", 1.0))
    assert judge(_hit(*strong, coverage=0.5), "plain", set(), 9.0, 2.0, 1).fire
    verdict = judge(_hit(*strong, coverage=0.15), "plain", set(), 9.0, 2.0, 1)
    assert not verdict.fire and "matches too little of the prompt" in verdict.reason
    # A rare identifier speaks alone only when the memory covers enough of the prompt;
    # a ticket id always does.
    rare = _ev("useEffect", subkind="camel", df=1)
    assert judge(_hit(rare, coverage=0.5), "plain", set(), 0.1, 2.0, 1).fire
    assert not judge(_hit(rare, coverage=0.2), "plain", set(), 0.1, 2.0, 1).fire
    ticket = _ev("PAY-1234", subkind="ticket", df=2)
    assert judge(_hit(ticket, coverage=0.1), "plain", set(), 0.1, 2.0, 1).fire


def test_names_found_only_in_pasted_code_are_weak_evidence() -> None:
    from memrecall.gate import pasted_keys

    prompt = "このPRをレビューして。トランザクションの範囲を見てほしい\n```go\ntx.Rollback()\n```"
    keywords = [_kw("トランザクション"), _kw("tx.Rollback", "identifier", "dotted")]
    assert pasted_keys(prompt, keywords) == {"tx.rollback"}
    rare = _ev("tx.Rollback", subkind="dotted", df=1)
    assert judge(_hit(rare), "plain", set(), 0.1, 2.0, 1).fire
    assert not judge(_hit(rare), "plain", set(), 0.1, 2.0, 1, pasted={"tx.rollback"}).fire
    two = _hit(_ev("kafka", 0.75), _ev("lag", 0.75))
    assert judge(two, "plain", set(), 9.0, 2.0, 1).fire
    assert not judge(two, "plain", set(), 9.0, 2.0, 1, pasted={"kafka"}).fire


def test_a_cue_wins_over_a_work_order() -> None:
    # "前に…直したっけ？ … 直して" asks for memory even though it ends as an order.
    assert prompt_shape("前に直したやつと同じように、この関数も直して") == "cue"


def _kw(text: str, kind: str = "noun", subkind: str = "") -> Keyword:
    return Keyword(text, kind, subkind or kind, "sudachi")


def test_compounds_made_only_of_everyday_words_are_everyday() -> None:
    vocabulary = load_generic([shipped_generic()])
    keywords = [
        _kw("環境変数", "compound"),
        _kw("ユニットテスト", "compound"),
        _kw("エラー時", "compound"),
        _kw("設定ファイル", "compound"),
        _kw("在庫同期", "compound"),
        _kw("サーキットブレーカー"),
        _kw("tests", "word"),
        _kw("handlers", "word"),
        _kw("kafka", "word"),
    ]
    found = generic_keys(keywords, vocabulary)
    assert {"環境変数", "ユニットテスト", "エラー時", "設定ファイル", "tests", "handlers"} <= found
    assert not {"在庫同期", "サーキットブレーカー", "kafka"} & found


def test_a_users_generic_words_join_the_shipped_ones(tmp_path: Path) -> None:
    mine = tmp_path / "generic.txt"
    mine.write_text("# ours\n在庫同期\nKafka\n", encoding="utf-8")
    vocabulary = load_generic([shipped_generic(), mine])
    assert {"在庫同期", "kafka"} <= generic_keys(
        [_kw("在庫同期", "compound"), _kw("Kafka", "word")], vocabulary
    )


def _hit(
    *evidence: Evidence, coverage: float = 0.5, exact: bool = False, ref: str = "notes/a.md"
) -> Hit:
    return Hit(
        store="obsidian",
        ref=ref,
        path=Path(ref),
        title="a",
        date=None,
        score=3.0,
        matched=[e.keyword for e in evidence],
        line=1,
        snippet="",
        lines=[],
        exact_id=exact,
        coverage=coverage,
        evidence=list(evidence),
    )


def _ev(
    keyword: str, rarity: float = 0.9, head: bool = False, subkind: str = "noun", df: int = 40
) -> Evidence:
    return Evidence(keyword, subkind, 1.0, rarity, df, head)


def test_only_everyday_words_never_fire_and_say_so() -> None:
    verdict = judge(
        _hit(_ev("test"), _ev("ログ")),
        "plain",
        {"test", "ログ"},
        acc=9.0,
        threshold=2.0,
        prompts_seen=1,
    )
    assert not verdict.fire
    assert verdict.reason.startswith("only everyday words matched") and "test" in verdict.reason


def test_the_needed_evidence_grows_from_cue_to_plain_to_code() -> None:
    two = _hit(_ev("kafka", 0.75), _ev("lag", 0.75))  # evidence 1.5
    fired = {
        shape: judge(two, shape, set(), acc=9.0, threshold=2.0, prompts_seen=1).fire
        for shape in NEEDS
    }
    assert fired == {"cue": True, "plain": True, "code": False, "wish": False}
    one = _hit(_ev("kafka", 0.9))
    fired = {
        shape: judge(one, shape, set(), acc=9.0, threshold=2.0, prompts_seen=1).fire
        for shape in NEEDS
    }
    assert fired == {"cue": True, "plain": False, "code": False, "wish": False}
    assert "a memory cue" in judge(one, "plain", set(), 9.0, 2.0, 1).reason
    # Two specific keywords that would convince in a question (evidence 2.0) do not make a
    # work order about the code at hand ("…を集計するスクリプトを書いて") a memory cue.
    order = _hit(_ev("件数", 1.0), _ev("集計", 1.0))
    assert judge(order, "plain", set(), 9.0, 2.0, 1).fire
    assert not judge(order, "code", set(), 9.0, 2.0, 1).fire


def test_a_topic_that_comes_back_needs_one_specific_keyword() -> None:
    one = _hit(_ev("kafka", 0.9), _ev("lag", 0.9))
    assert not judge(_hit(_ev("kafka", 0.9)), "plain", set(), 9.0, 2.0, prompts_seen=1).fire
    assert judge(_hit(_ev("kafka", 0.9)), "plain", set(), 9.0, 2.0, prompts_seen=2).fire
    assert judge(one, "plain", set(), 9.0, 2.0, 1).fire


def test_a_title_covering_the_whole_prompt_needs_one_keyword_except_for_code_at_hand() -> None:
    covered = _hit(_ev("条件分岐", 0.9, head=True), _ev("dockerfile"), coverage=1.0)
    generic = {"dockerfile"}
    assert judge(covered, "plain", generic, 9.0, 2.0, 1).fire
    assert not judge(covered, "code", generic, 9.0, 2.0, 1).fire


def test_a_work_order_whose_words_a_title_holds_is_judged_as_a_question() -> None:
    # "FindFreePort is exported but never called, remove it?" and the issue titled with it.
    titled = _hit(
        _ev("FindFreePort", 0.85, head=True, subkind="camel", df=6),
        _ev("never", 0.5, head=True, subkind="word"),
        _ev("remove", 0.3, subkind="word"),
        coverage=1.0,
    )
    assert judge(titled, "code", set(), 9.0, 2.0, 1).fire
    # The same words in the text only, or the title holding one of them, are not enough.
    in_text = _hit(
        _ev("FindFreePort", 0.85, subkind="camel", df=6),
        _ev("never", 0.5, subkind="word"),
        _ev("remove", 0.3, subkind="word"),
        coverage=1.0,
    )
    assert not judge(in_text, "code", set(), 9.0, 2.0, 1).fire
    one_in_title = _hit(_ev("regex", 0.9, head=True), _ev("do", 0.5), coverage=1.0)
    assert not judge(one_in_title, "code", set(), 9.0, 2.0, 1).fire


def test_exact_ids_and_distinctive_identifiers_fire_alone_but_everyday_files_do_not() -> None:
    exact = _hit(_ev("bd-kpy", subkind="beads", df=30), exact=True, ref="bd-kpy")
    assert (
        judge(exact, "code", set(), acc=0.1, threshold=2.0, prompts_seen=1).reason
        == "names bd-kpy itself"
    )
    ticket = _hit(_ev("PAY-1234", subkind="ticket", df=2))
    assert judge(ticket, "code", set(), 0.1, 2.0, 1).fire
    package = _hit(_ev("package.json", subkind="dotted", df=1))
    assert not judge(package, "plain", {"package.json"}, 9.0, 2.0, 1).fire


@pytest.mark.parametrize(
    "path",
    [
        "internal/payment/client.go",
        "terraform/envs/prod/versions.tf",
        "services/billing/handler.go",
        "pkg/ledger/config.go",
    ],
)
def test_an_everyday_file_name_under_a_topical_directory_names_one_place(path: str) -> None:
    # versions.tf and client.go are every project's; terraform/envs/prod/ and internal/payment/
    # are not, and a session that touched that very file is the memory to show.
    vocabulary = load_generic([shipped_generic()])
    everyday = generic_keys([_kw(path, "identifier", "path")], vocabulary)
    assert everyday == set()
    named = _hit(_ev(path, subkind="path", df=1), _ev("provider", subkind="word"), coverage=0.3)
    verdict = judge(named, "cue", everyday, 0.1, 2.0, 1)
    assert verdict.fire and verdict.reason.startswith(f"distinctive {path}")


@pytest.mark.parametrize(
    "path", ["src/index.ts", "app/utils/config.py", "lib/models/user.rb", "config.py"]
)
def test_an_everyday_file_name_under_everyday_directories_stays_everyday(path: str) -> None:
    vocabulary = load_generic([shipped_generic()])
    kind = "path" if "/" in path else "dotted"
    everyday = generic_keys([_kw(path, "identifier", kind)], vocabulary)
    assert everyday == {path}
    verdict = judge(_hit(_ev(path, subkind=kind, df=1)), "cue", everyday, 9.0, 2.0, 1)
    assert not verdict.fire


def test_a_browser_or_mobile_platform_names_where_a_bug_shows_not_which_bug() -> None:
    # "does nothing on iOS Safari": one issue in a thousand says iOS, and still it is not the one.
    vocabulary = load_generic([shipped_generic()])
    named = [("iOS", "camel"), ("Safari", "word"), ("Android", "word"), ("Chrome", "word")]
    keywords = [_kw(name, "word", subkind) for name, subkind in named]
    everyday = generic_keys(keywords, vocabulary)
    assert {"ios", "safari", "android", "chrome"} <= {key.casefold() for key in everyday}
    ios = _hit(_ev("iOS", subkind="camel", df=1), _ev("Safari", subkind="word", df=3))
    verdict = judge(ios, "plain", everyday, 9.0, 2.0, 1)
    assert not verdict.fire and verdict.reason.startswith("only everyday words matched")
    kafka = _hit(_ev("iOS", subkind="camel", df=1), _ev("KafkaConsumer", subkind="camel", df=1))
    assert judge(kafka, "plain", everyday, 9.0, 2.0, 1).fire


def test_the_score_threshold_still_holds_and_a_cue_lowers_it() -> None:
    two = _hit(_ev("kafka", 0.9), _ev("lag", 0.9))
    assert (
        "below threshold"
        in judge(two, "plain", set(), acc=1.8, threshold=2.0, prompts_seen=1).reason
    )
    assert judge(two, "cue", set(), acc=1.8, threshold=2.0, prompts_seen=1).fire


def test_alias_groups_come_from_the_manifest_and_skip_sentences_and_markup() -> None:
    files = {
        "/v/k8s.md": {"keys": ["x"], "aliases": ["Kubernetes", "k8s", "クバネティス"]},
        "/v/long.md": {
            "keys": ["y"],
            "aliases": [
                "A note",
                "this alias is a whole sentence that nobody would type as a name",
            ],
        },
        "/v/plain.md": {"keys": ["z"]},
        "/v/odd.md": {"keys": ["w"], "aliases": ["a,b|c #tag", "abc"]},
    }
    lines = [line for line in alias_groups(files).splitlines() if not line.startswith("#")]
    assert lines == ["Kubernetes, k8s, クバネティス", "a b c tag, abc"]
    groups = load_synonyms([])
    assert groups == {}


def test_synonym_groups_chained_by_shared_words_do_not_merge_into_one(tmp_path: Path) -> None:
    table = tmp_path / "synonyms.txt"
    table.write_text(
        "\n".join(f"Go, name{n}a, name{n}b" for n in range(20)) + "\n", encoding="utf-8"
    )
    groups = load_synonyms([table])
    assert max(len(group) for group in groups.values()) <= 16
    assert {"name0a", "name0b"} <= {w.casefold() for w in groups["name0a"]}


def test_a_backticked_command_of_everyday_words_is_everyday() -> None:
    vocabulary = load_generic([shipped_generic()])
    keywords = [
        _kw("git commit", "identifier", "code"),
        _kw("docker build", "identifier", "code"),
        _kw("git merge --squash", "identifier", "code"),
        _kw("sync_inventory_batch", "identifier", "code"),
    ]
    assert generic_keys(keywords, vocabulary) == {"git commit", "docker build"}


@pytest.mark.parametrize(
    "prompt",
    [
        "CLAUDE.local.md に設定だけ書いて、コミットせずに試したいんだけど、それって対応してる？",
        "見出しを曜日で分けたい。参考になる例ある?",
        "放置されてるチケットを洗い出したい。そういうコマンドってある？",
        "古い JUnit の書き方から移したいんだけど、手順まとめたのあった?",
    ],
)
def test_a_wish_that_asks_whether_it_exists_is_a_plain_question(prompt: str) -> None:
    # "…したいんだけど、対応してる?" asks what is known, not for new code.
    assert prompt_shape(prompt) == "plain"


@pytest.mark.parametrize(
    "prompt",
    ["ログを JSON で出したい", "ステージングだけ Basic 認証をかけたい。Ingress の設定でできる?"],
)
def test_a_wish_without_such_a_question_stays_a_wish_or_code(prompt: str) -> None:
    assert prompt_shape(prompt) in ("wish", "code")
