"""A Japanese compound that ends in a relational suffix (`パスごと` per path, `サーバー側` on the
server side, `会議中` during the meeting, `テスト用` for tests, `起動時` at startup) is about
the noun: memories write the noun without the suffix, so the keyword is the noun."""

from __future__ import annotations

import pytest

from memrecall.keywords import extract
from memrecall.tokenizers import resolve


@pytest.mark.parametrize("backend", ["sudachi", "mecab"])
@pytest.mark.parametrize(
    ("prompt", "noun", "compound"),
    [
        ("API のパスごとに件数を出したい", "パス", "パスごと"),
        ("サーバー側でエラーになる", "サーバー", "サーバー側"),
        ("会議中にミュートしたい", "会議", "会議中"),
        ("テスト用のデータを作る", "テスト", "テスト用"),
        ("起動時に落ちる", "起動", "起動時"),
        ("言語別に集計する", "言語", "言語別"),
        # Only roughly the topic: payments and the like, jobs of some kind.
        ("決済まわりで二重実行を防ぎたい", "決済", "決済まわり"),
        ("夜中のジョブ系の設定を変えた", "ジョブ", "ジョブ系"),
        ("ビルド関連のエラーが出る", "ビルド", "ビルド関連"),
        ("認証周りのテストを足す", "認証", "認証周り"),
    ],
)
def test_a_relational_suffix_leaves_the_noun(
    backend: str, prompt: str, noun: str, compound: str
) -> None:
    analyzer, _ = resolve(backend, None)
    texts = [k.text for k in extract(prompt, analyzer, set())]
    assert noun in texts and compound not in texts, texts


@pytest.mark.parametrize("backend", ["sudachi", "mecab"])
@pytest.mark.parametrize(
    "word", ["本番環境", "日時", "同時", "依存関係", "体系", "全文検索", "全角", "別名", "同期"]
)
def test_a_compound_or_noun_that_merely_contains_one_stays(backend: str, word: str) -> None:
    analyzer, _ = resolve(backend, None)
    texts = [k.text for k in extract(f"{word}を確認する", analyzer, set())]
    assert word in texts, texts


@pytest.mark.parametrize("backend", ["sudachi", "mecab"])
@pytest.mark.parametrize(
    ("prompt", "noun", "junk"),
    [
        ("毎回ログインし直すのがつらい", "ログイン", "毎回ログイン"),
        ("全部インデックスし直したい", "インデックス", "全部インデックス"),
        ("何日更新がないかで絞りたい", "更新", "何日更新"),
        ("何回失敗したら止めるの", "失敗", "何回失敗"),
        ("毎回コピペしてる設定", "コピペ", "毎回コピペ"),
        # Determiners: another branch, every agent, each service.
        ("別ブランチとマージしたら戻った", "ブランチ", "別ブランチ"),
        ("全エージェントに配りたい", "エージェント", "全エージェント"),
        ("各サービスのログを集めたい", "サービス", "各サービス"),
    ],
)
def test_an_adverb_or_a_determiner_joins_no_compound(
    backend: str, prompt: str, noun: str, junk: str
) -> None:
    # 毎回 "every time", 全部 "all of it", 何日 "how many days" modify the verb: the noun after
    # them is the keyword a memory holds.
    analyzer, _ = resolve(backend, None)
    texts = [k.text for k in extract(prompt, analyzer, set())]
    assert noun in texts and junk not in texts, texts
    assert not {"毎回", "全部", "何日", "何回"} & set(texts), texts
