"""The recall gate: whether a memory is worth Claude's attention for this prompt.

Pure: hits and their evidence in, a named verdict out, every decision in words a user can
act on (the recall log keeps them). The README's "When recall fires" describes the rules:

1. The prompt names the memory: a beads id equal to the issue's own, or an identifier (a
   ticket id, a path, a code name) found in at most 5 memories of its store. It speaks.
2. Otherwise only SPECIFIC keywords count as evidence: not the everyday coding vocabulary
   (`generic.txt`: test, log, config, 関数, 環境変数 …) and not a compound made only of it.
   Evidence = Σ credit × rarity (× 1.25 in a title, tag or id) over those keywords.
3. How much evidence is enough depends on the prompt's shape. A memory cue ("前に", "っけ",
   "どうなった", "last time", "did we") asks for memory; a request about the code in front
   of Claude ("この関数", "this file") or a work order ("add …", "…を追加して") does not;
   anything else sits between. A memory whose title covers the whole prompt needs less.
4. The session counts: a memory whose topic comes back in a later prompt accumulates score
   (halved every turn); the accumulated score must reach `recall.threshold` as well.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Any, Iterable

from . import regexcache

if TYPE_CHECKING:
    from .keywords import Keyword
    from .search import Evidence, Hit
    from .session import SessionState

# Japanese cues are matched anywhere (no word edges); English ones as whole phrases.
_CUE_JA = regexcache.compile(
    # "前に" is "before now", not a word holding 前 (名前に, 事前に, 直前に, 午前に, 手前に) nor
    # "before doing" (コミットする前に, デプロイの前に, 送信前に, マージ前に, commit前に): a plan,
    # like "before I open the PR". After a unit of time it is "ago" (3日前に, 半年前に).
    r"(?:(?<=[日週月年間分秒])|(?<![\u3400-\u9fff々\u30a0-\u30ffA-Za-zのるたうくすつぬむぐい]))前に|"
    r"この前|こないだ|先日|先週|先月|昔(?!ながら)|っけ|だったよね|たよね|てたよね|したよね|"
    # "〜た件" is any past event ("上書きしちゃった件"); "何だった" asks what it was. "この件"
    # is the matter at hand.
    r"(?<!こ)の件(?![数名目])|た件(?![数名目])|(?:何|なん)だった|どうなった|結局|"
    # "どうした?" asks what was done; "どうしたらいい", "どうしたいか" ask what to do.
    r"どうした(?!ら|い|もの)|"
    # "どう直した?" asks how a past problem was solved.
    r"どう(?:やって)?(?:直し|解決し|対処し|対応し|回避し|修正し|片付け)た|"
    # "決めた", "決めてあった" recall a decision; "決めたい", "決めてください" ask for one.
    r"決めた(?!い)|決めて(?:た|いた|ある|あった|おいた)|思い出|"
    # "方針が決まった" recalls a decision; "決まった時間に", "決まった形式で" mean fixed.
    r"決まった(?!時間|時刻|形式|形|順|フォーマット|値|パターン|場所|タイミング|間隔|周期|数|"
    r"件数|サイズ|長さ|位置)|"
    # "覚えてる?", "覚えてますか" recall; "選択を覚えておくようにして" is an order.
    # "メモした", "メモに書いた" recall a note; "メモを取るアプリ" is an app to build.
    r"覚えて(?:る|ます|ない|いる|いない|いま)|"
    r"メモ(?:した|して(?:た|いた|ある|あった|おいた)|った|しといた|に(?:書い|残し|あ))|"
    # "例の件" is that matter; "以下の例のように" is an example to follow.
    r"あの(?:件|時|とき|バグ|エラー|メモ|話)|(?<![のな])例の(?!よう|通り|とおり)|"
    # "これ既知のやつ？" asks whether a memory already has it.
    r"既知の(?:バグ|問題|不具合|やつ|件|事象|エラー|現象)|"
    # A plan made before: "消す予定だった", "移すつもりだった".
    r"(?:予定|つもり)だった|"
    # "…直す話、issue になってた?" asks whether a tracker holds it.
    r"(?:issue|イシュー|チケット|課題)\s*(?:に|が|として)"
    r"(?:なって|上がって|切られて|立って|起票されて|登録されて)(?:た|る)[?？]|"
    # "どういう方針だった？" asks what was decided; "どういう方針がいい？" asks for one.
    r"(?:どういう|どんな)(?:方針|結論|話|理由|原因|対応|経緯|やり方|方法|設計)だった"
)
_CUE_EN = regexcache.compile(
    r"\b(?:last time|remind me|recall|did we|"
    # "I remember …", "remember when …" recall; "remember the choice in localStorage" is an
    # order about the code at hand.
    r"(?:i|we|you|do you|don't you) remember|remember (?:when|how|what|why|where|which|who|"
    r"if|whether|that|the (?:issue|bug|ticket|fix|incident|time|note|discussion))|"
    # "before" asks about the past only after a verb of experience: "before I open the PR"
    # is a plan, "we hit this before" a memory.
    r"(?:seen|saw|had|did|done|tried|fixed|hit|discussed|mentioned|noted|solved|happened|"
    r"come up|came up)(?: (?:this|that|it|one))? before|"
    r"have we|had we|(?:i|we) once|(?:didn't|weren't|haven't|hadn't) we|"
    r"how did we|what did we|why did we|where did we|back then|"
    r"(?:is|was) (?:this|that|it) (?:a )?known|"
    # A plan made before: "when were we planning to delete it?", "we were going to …".
    r"(?:were|was) we (?:planning|going|supposed)|we (?:planned|were planning|were going))\b",
    re.IGNORECASE,
)
# Cues that also describe the system at hand ("前回の実行が終わってない", "the server won't
# start again", "the previous page"): a memory cue unless the prompt gives a work order.
_WEAK_CUE_JA = regexcache.compile(
    # "続きから再開できるように" resumes a job where it stopped, the system at hand again.
    r"前回|以前|続き(?!から(?:再開|処理|実行|読み込|取り込|ダウンロード|アップロード|送信))|再発|"
    r"また(?:同じ|出|起き|落ち)"
)
_WEAK_CUE_EN = regexcache.compile(
    r"\b(?:again|previous(?:ly)?|earlier|follow[- ]up|still (?:open|broken|failing)|"
    # They tell of the past, or of the code at hand: "we used lodash here but want to drop
    # it", "the total ended up negative", "fix that issue with the header".
    r"we (?:decided|chose|agreed|settled|used|fixed|found|noted|wrote|did|had|ended up)|"
    r"what was|what were|ended up|what happened|"
    r"the (?:issue|ticket|note|memo|bug|incident) (?:about|where|with)|"
    r"that (?:issue|ticket|bug|incident|note|time)|(?:our|my) notes?|"
    # "Wasn't a leftover lock the cause?" opens a question about what was found.
    r"(?:^|(?<=[.!?]\s))wasn't)\b",
    re.IGNORECASE,
)
# A request about the code in front of Claude: "この関数", "ここ", "this file", "these tests".
_DEICTIC_JA = regexcache.compile(r"この(?!前|間|あいだ)|これ|ここ|今の|現在の|今回の|下記|以下の")
_DEICTIC_EN = regexcache.compile(
    r"\b(?:this|these|here|the current|the following|below)\b", re.IGNORECASE
)
# A work order rather than a question: "add …", "make …", "…を追加して", "…にしてほしい".
# Any sentence or clause may give the order ("build_report is slow. Profile it", "In the
# BlogPost model, normalise the tags"); the verbs are the ones a developer orders code with.
_ORDER_EN = regexcache.compile(
    # A dash joins a symptom to its order too ("CI fails with … - add PyYAML to the deps"), and an
    # adverb may come first ("In NoteCard.vue, only render the chips …").
    r"(?:^|[.!?;:,]\s+|\s[-–—]\s+|\n)\s*(?:(?:only|also|just|then|now)\s+)?"
    r"(?:please\s+|can you\s+|could you\s+|would you\s+|let's\s+|"
    r"(?:i|we) (?:want|need|have) to\s+|i'd like to\s+)?"
    r"(?:add|make|write|fix|implement|create|refactor|rename|update|remove|delete|convert|"
    r"extract|move|change|set up|setup|generate|explain|optimi[sz]e|improve|clean up|split|"
    r"replace|bump|upgrade|downgrade|format|document|translate|review|test|run|build|migrate|"
    r"port|introduce|wrap|return|use|read|parse|validate|handle|log|print|show|list|sort|"
    r"cache|mock|stub|profile|wire|display|render|invalidate|check|verify|ensure|enable|"
    r"disable|allow|prevent|avoid|support|expose|hide|send|store|save|load|fetch|call|"
    r"throttle|debounce|limit|paginate|filter|group|merge|rebase|squash|revert|commit|push|"
    r"deploy|configure|install|uninstall|pin|lint|annotate|simplify|inline|reorder|"
    r"restructure|reorgani[sz]e|consolidate|dedupe|deduplicate|memoi[sz]e|batch|stream|"
    r"seriali[sz]e|deseriali[sz]e|encode|decode|compress|normali[sz]e|sanitize|escape|trim|"
    r"strip|truncate|measure|benchmark|speed up|reduce|increase|decrease|tweak|adjust|tune|"
    r"shorten|rewrite|modernize|swap|drop|skip|ignore|catch|raise|throw|emit|publish|"
    r"schedule|spawn|restart|compute|calculate|count|aggregate|export|import|upload|"
    r"download|copy|scaffold|bootstrap|initiali[sz]e|seed|populate|insert|style|center|"
    r"align|resize|locali[sz]e|switch|pull|combine|guard|debug|investigate|look into|"
    r"suggest|propose|walk me through|centrali[sz]e|unify|standardi[sz]e|enforce|require|"
    r"make sure|keep|stop|find out|find|figure out|track down|turn|protect|"
    r"synchroni[sz]e|harden|persist|put|type|redact|mask|include|exclude|retry|wait|encrypt|"
    r"hash|roll back|rollback|tidy|cap|lower|"
    # Not `force-unlock`, `redirect_uri`: a word of a command or a name.
    r"(?:remember|force|redirect)(?=\s))\b"
    # Nor a word a Japanese particle follows: "import の途中で Ctrl+C したら…" names the command,
    # and the Japanese sentence around it says what is asked ("Add テスト for …" still orders).
    r"(?!\s*[\u3040-\u309f])",
    re.IGNORECASE,
)
# A request anywhere in the prompt: "build_report is slow on big inputs, can you profile it".
_ASK_EN = regexcache.compile(r"\b(?:can|could|would) you\b|\bplease\b", re.IGNORECASE)
# At the end of any sentence: a long request gives its order first and its context after
# ("…を書いてください。「3分前」「昨日」あたりの境界も").
_SENTENCE_END = r"(?=[。.!！?？\n」]|$)"
_ORDER_JA = regexcache.compile(
    r"(?:して|しといて|しておいて|書いて|作って|直して|教えて|調べて|考えて|まとめて|出して|"
    r"付けて|つけて|消して|変えて|揃えて|そろえて|見て|覚えて|"
    # A causative order: "…で終了させて", "ログを出力させて".
    r"させて|"
    # The other verbs a developer orders code with, in the casual て-form ("待ち合わせを入れて。").
    r"入れて|足して|分けて|外して|減らして|増やして|止めて|使って|置いて|移して|残して|返して|"
    r"渡して|待って|読んで|呼んで|選んで|包んで|絞って|切って|切り替えて|寄せて|並べて|載せて|"
    r"加えて|伸ばして|縮めて|抜いて|替えて|換えて|抑えて|防いで|弾いて|隠して|つないで|繋いで)"
    + _SENTENCE_END
    + "|"
    r"(?:て|で)(?:ください|下さい|くれ(?:ます|ません)?か|もらえ(?:ます|ません)か|ほしい|欲しい|"
    # The casual asks: "見てくれる?", "直してくれない?" ("起動してくれない。" is a complaint).
    r"くれる|もらえる|(?:くれ|もらえ)ない(?=[?？]))"
    r"(?:です)?" + _SENTENCE_END
)
# A wish ("…に移行したいです", "…を出したい"): a work order, unless a memory's title says just
# that wish (a how-to note: "Dockerfile の中で条件分岐したい" → "Dockerfile内で条件分岐する").
_WISH_JA = regexcache.compile(
    r"たい(?:です|んです|のですが|んですが|んだけど|けど|が)?(?=[。.!！?？\n、,」]|$)"
)
# A wish that asks whether the thing exists or is supported ("…したい。参考になる例ある?",
# "…試したいんだけど、それって対応してる?") asks what is known, as a plain question does.
# Not "できる?": "Ingress の設定でできる?" asks how to build it.
_ASKS_WHETHER_JA = regexcache.compile(
    r"(?:ある|あった|あります|ありました|対応して(?:る|ます|いる))(?:の|ん)?(?:かな|か)?[?？]"
)
# Code or output pasted into the prompt is the material at hand, like "this file".
_PASTED = regexcache.compile(r"```")

_FILE_STEM = regexcache.compile(r"\.[a-z0-9]{1,8}$")
# Ids that name one memory in any prompt. Code names (`next_cursor`, `GitHub`, `config.py`)
# name it only when the prompt asks about the past or a topic: in a work order about the code
# at hand they are what the new code will be called, and count as ordinary evidence.
STRONG_IDS = frozenset({"ticket", "beads", "url"})
# An English word in a memory's text is a weaker clue than an identifier or a Japanese noun
# (`keep`, `public`, `changes` mean many things): its evidence counts this much (in a title,
# tag or id it counts in full, × HEAD_WEIGHT).
ENGLISH_WORD_WEIGHT = 0.6

# Japanese suffixes that make a compound of everyday words no less everyday (エラー時, 変数名).
_GENERIC_SUFFIXES = frozenset("時用名数値型化的性等後前中内外毎別側系式")

# (specific keywords, evidence) a memory needs, by prompt shape.
_WORK_ORDER_NEEDS = (2, 2.4)
NEEDS = {
    "cue": (1, 0.75),
    "plain": (2, 1.3),
    "code": _WORK_ORDER_NEEDS,
    "wish": _WORK_ORDER_NEEDS,  # a work order, with its own exception (see `judge`)
}
# A memory matching a small share of a long prompt matched it by coincidence: it must cover
# this much of the prompt's keywords (an id rare enough to speak alone: MIN_COVERAGE_ID), unless
# a ticket, beads id or URL names it.
MIN_COVERAGE = 0.2
MIN_COVERAGE_ID = 0.25
# A prompt that asks for memory accepts a lower accumulated score (× this of the threshold).
CUE_THRESHOLD_FACTOR = 0.5
# A specific keyword in a memory's title/tags/id counts this much more as evidence.
HEAD_WEIGHT = 1.25
# A keyword found only in code or output pasted into the prompt counts this much (and never
# names a memory on its own): `err`, `tx.Rollback`, `wg.Add` are in front of Claude already.
PASTED_WEIGHT = 0.5
# A verb or adjective (固まる, 遅い) backing a memory cue counts this much as evidence.
PREDICATE_WEIGHT = 0.5


def prompt_shape(prompt: str) -> str:
    """`cue` (asks about the past), `code` (about the code at hand, or a work order), `wish`
    (…したい) or `plain`."""
    text = unicodedata.normalize("NFKC", prompt)
    if _CUE_JA.search(text) or _CUE_EN.search(text):
        return "cue"
    order = _ORDER_EN.search(text) or _ASK_EN.search(text) or _ORDER_JA.search(text)
    if not order and (_WEAK_CUE_JA.search(text) or _WEAK_CUE_EN.search(text)):
        return "cue"
    if order or _DEICTIC_JA.search(text) or _DEICTIC_EN.search(text) or _PASTED.search(text):
        return "code"
    if _WISH_JA.search(text) and not _ASKS_WHETHER_JA.search(text):
        return "wish"
    return "plain"


def load_generic(paths: Iterable[Path]) -> frozenset[str]:
    """The everyday vocabulary, case-folded, plus the stems of its English words."""
    from .keywords import list_file_lines, term_key

    words: set[str] = set()
    for line in list_file_lines(paths):
        word = unicodedata.normalize("NFKC", line).casefold()
        words.add(word)
        words.add(term_key(word))
    return frozenset(words)


def _made_of(text: str, vocabulary: frozenset[str]) -> bool:
    """Whether `text` splits entirely into vocabulary words (and everyday suffixes)."""
    n = len(text)
    reachable = [True] + [False] * n
    for end in range(1, n + 1):
        for start in range(max(0, end - 12), end):
            if not reachable[start]:
                continue
            piece = text[start:end]
            if piece in vocabulary or (
                end - start == 1 and start > 0 and piece in _GENERIC_SUFFIXES
            ):
                reachable[end] = True
                break
    return reachable[n]


# Written as words before a hyphen (`non-empty`, `re-run`, `self-hosted`): no topic of their own.
# Not `pre` and `post`: `pre-commit` and `post-merge` are hooks people ask about.
_ENGLISH_PREFIXES = frozenset(
    "non re un co sub multi self semi anti well auto cross over under out".split()
)


def _everyday(word: str, vocabulary: frozenset[str]) -> bool:
    """Whether `word` is in the vocabulary as written or as its stem (`tests` → `test`)."""
    from .keywords import term_key

    return word in vocabulary or term_key(word) in vocabulary


def _words_all_in(text: str, vocabulary: frozenset[str]) -> bool:
    words = [w for w in re.split(r"[\s/\-]+", text) if w]
    return len(words) >= 2 and all(_everyday(w, vocabulary) for w in words)


# Directories every project has: they say where a file sits, not what it is about.
_SOURCE_DIRS = frozenset(
    "src lib libs pkg cmd internal app apps test tests spec specs docs doc scripts bin "
    "components pages utils util common shared core include main java resources public".split()
)


def _everyday_file_stem(path: str, vocabulary: frozenset[str]) -> str:
    """A file's name without its extension (config.py → config), when the path around it says
    nothing either: src/index.ts is every project's, internal/payment/client.go is one place."""
    *directories, name = path.split("/")
    for directory in directories:
        if directory and directory not in _SOURCE_DIRS and not _everyday(directory, vocabulary):
            return ""
    return _FILE_STEM.sub("", name)


def generic_keys(keywords: list[Keyword], vocabulary: frozenset[str]) -> set[str]:
    """The prompt's keywords (case-folded) that are everyday vocabulary, or compounds of it."""
    found = set()
    with_prefixes = vocabulary | _ENGLISH_PREFIXES
    for keyword in keywords:
        key = keyword.key
        stem = _everyday_file_stem(key, vocabulary) if keyword.subkind in ("dotted", "path") else ""
        if keyword.kind == "predicate":
            found.add(key)  # 固まる, 遅い: they rank memories, never make one fire
        elif _everyday(key, vocabulary):
            found.add(key)
        elif stem and _everyday(stem, vocabulary):
            found.add(key)  # config.py, utils.go, src/index.ts: every project has one
        elif keyword.subkind == "number":
            found.add(key)  # 200, 401, 100: status codes, sizes, counts
        elif keyword.subkind == "code" and _words_all_in(key, vocabulary):
            found.add(key)  # `git merge`, `docker compose up`: everyday commands
        elif keyword.kind == "compound" and key.isascii() and _words_all_in(key, with_prefixes):
            found.add(key)  # `follow-up`, `non-empty`: it ranks, it does not fire alone
        elif (
            keyword.kind in ("compound", "noun", "part")
            and len(key) >= 2
            and _made_of(key, vocabulary)
        ):
            found.add(key)
    return found


@dataclass
class Verdict:
    fire: bool
    # Why, in words: "names bd-kpy", "3 specific keywords (…), evidence 1.9",
    # "only everyday words matched (test, ログ)".
    reason: str
    strength: float = 0.0
    specific: list[str] = field(default_factory=list)


def evidence_strength(evidence: list[Evidence], pasted: AbstractSet[str] = frozenset()) -> float:
    return sum(
        e.credit
        * e.rarity
        * (
            HEAD_WEIGHT
            if e.head
            else ENGLISH_WORD_WEIGHT
            if e.subkind in ("word", "phrase")
            else 1.0
        )
        * (PASTED_WEIGHT if e.keyword.casefold() in pasted else 1.0)
        * (PREDICATE_WEIGHT if e.subkind == "predicate" else 1.0)
        for e in evidence
    )


def pasted_keys(prompt: str, keywords: list[Keyword]) -> set[str]:
    """The keywords (case-folded) found only inside fenced code (```…```) of the prompt: the
    code or output the user is working on, whose names match memories by coincidence."""
    if "```" not in prompt:
        return set()
    parts = prompt.split("```")
    prose = " ".join(parts[0::2]).casefold()
    pasted = " ".join(parts[1::2]).casefold()
    return {k.key for k in keywords if k.key in pasted and k.key not in prose}


def judge(
    hit: Hit,
    shape: str,
    generic: set[str],
    acc: float,
    threshold: float,
    prompts_seen: int,
    pasted: AbstractSet[str] = frozenset(),
) -> Verdict:
    """The verdict on one memory for this prompt. `acc` is its session-accumulated score,
    `prompts_seen` how many of the session's prompts it matched (this one included)."""
    from .ranking import DISTINCTIVE_MAX_DF, DISTINCTIVE_SUBKINDS

    # A word matched only through a dictionary gloss ranks the memory; it is no evidence:
    # the dictionary's everyday senses (要望 "request", 一行 "one line") are in every store.
    specific = [e for e in hit.evidence if e.keyword.casefold() not in generic and not e.gloss]
    if shape in ("code", "wish"):
        # A duration or size in a work order ("make the timeout 30 seconds") is the value the
        # new code will use; told as a symptom or asked about (5秒で落ちる) it is the incident's.
        specific = [e for e in specific if e.subkind != "quantity"]
    if shape == "cue" and specific:
        # A symptom in a verb or adjective (固まる, 遅い) backs a memory the user asks to recall
        # that matched on a topic too; alone it is every project's, and everyday.
        specific += [e for e in hit.evidence if e.subkind == "predicate"]
    names = [e.keyword for e in specific]
    if hit.exact_id:
        return Verdict(True, f"names {hit.ref} itself", specific=names)
    for e in specific:
        if e.keyword.casefold() in pasted:
            continue
        if e.subkind not in STRONG_IDS and (
            hit.coverage < MIN_COVERAGE_ID
            or (shape in ("code", "wish") and not (e.subkind == "path" and "/" in e.keyword))
        ):
            continue
        if e.credit == 1.0 and e.subkind in DISTINCTIVE_SUBKINDS and e.df <= DISTINCTIVE_MAX_DF:
            where = "memory" if e.df == 1 else "memories"
            return Verdict(True, f"distinctive {e.keyword} (in {e.df} {where})", specific=names)
    strength = evidence_strength(specific, pasted)
    glossed = [e.keyword for e in hit.evidence if e.gloss]
    if not specific:
        everyday = ", ".join(e.keyword for e in hit.evidence[:4] if not e.gloss)
        if not glossed:
            return Verdict(False, f"only everyday words matched ({everyday})")
        via = f"{', '.join(glossed[:4])} matched only in English, through the dictionary"
        return Verdict(
            False, f"only everyday words matched ({everyday}); {via}" if everyday else via
        )
    if hit.coverage < MIN_COVERAGE:
        return Verdict(
            False,
            f"matches too little of the prompt ({hit.coverage:.0%} of its keywords: "
            f"{', '.join(names[:5])})",
            strength,
            names,
        )
    need_count, need_strength = NEEDS.get(shape, NEEDS["plain"])
    if prompts_seen >= 2:
        # The topic came back: one specific keyword is enough on its second mention.
        need_count, need_strength = 1, min(need_strength, NEEDS["cue"][1])
    in_head = sum(1 for e in specific if e.head)
    covered = hit.coverage >= 0.99 and in_head >= 1
    if covered and shape != "code":
        # The memory's title says all the prompt says ("Dockerfile の中で条件分岐したい" →
        # "Dockerfile内で条件分岐する"): one specific keyword is enough.
        need_count, need_strength = 1, min(need_strength, 0.75)
    elif covered and in_head >= 2:
        # A work order whose every word the memory's title holds, two of them specific
        # ("FindFreePort is exported but never called, remove it?" → the issue saying just
        # that): it is about that memory, as a plain question would be.
        need_count, need_strength = NEEDS["plain"]
    listed = ", ".join(names[:5])
    if len(specific) < need_count or strength < need_strength:
        hint = {
            "cue": "",
            "plain": "; a memory cue (前に, っけ, last time, did we) lowers the bar",
            "code": "; a request about the code at hand (この/this) needs more",
            "wish": "; a wish (…したい) is a work order unless a title says just that",
        }[shape if shape in NEEDS else "plain"]
        if glossed:
            hint += f"; {', '.join(glossed[:4])} matched only through the dictionary (no evidence)"
        return Verdict(
            False,
            f"too little specific evidence: {len(specific)} keyword(s) ({listed}), {strength:.2f} "
            f"< {need_count} keyword(s) and {need_strength:.2f}{hint}",
            strength,
            names,
        )
    if shape == "cue":
        threshold *= CUE_THRESHOLD_FACTOR
    if acc < threshold:
        return Verdict(
            False, f"below threshold (score {acc:.2f} < {threshold:.2f})", strength, names
        )
    came_back = f", came up in {prompts_seen} prompts" if prompts_seen >= 2 else ""
    return Verdict(
        True,
        f"{len(specific)} specific keyword(s) ({listed}), evidence {strength:.2f}{came_back}",
        strength,
        names,
    )


@dataclass
class GateResult:
    chosen: list[Hit]  # to inject, best first (the context budget may still leave some out)
    top: list[dict[str, object]]  # the best candidates with their verdicts, for the log
    skipped: int  # candidates already injected in this session
    best_was_injected: bool


def advance(
    state: SessionState,
    hits: list[Hit],
    threshold: float,
    decay: float,
    max_hits: int,
    shape: str = "plain",
    generic: set[str] | None = None,
    pasted: AbstractSet[str] = frozenset(),
) -> GateResult:
    """One prompt of the session: every memory's accumulated score decays by one turn, this
    prompt's hits add theirs, and each hit gets its verdict (`judge`)."""
    generic = generic or set()
    state.turn += 1
    turn = state.turn
    injected = state.injected_keys()
    scores: dict[str, dict[str, Any]] = {}
    for key, entry in state.scores.items():
        if isinstance(entry, dict) and isinstance(entry.get("acc"), (int, float)):
            entry["acc"] = float(entry["acc"]) * decay
            if entry["acc"] >= 0.05:
                scores[key] = entry
    eligible = []
    skipped = 0
    verdicts: dict[str, str] = {}
    repeated: set[str] = set()
    for hit in hits:
        entry = scores.get(hit.key, {"acc": 0.0, "turns": [], "keywords": []})
        acc = float(entry["acc"]) + hit.score
        turns = sorted(set(entry.get("turns", [])[-5:]) | {turn})
        verdict = judge(hit, shape, generic, acc, threshold, len(turns), pasted)
        if hit.key in injected:
            # Never injected twice, and its score is left as it was; but the log says
            # "already injected" only of a memory that would speak now: one matching a
            # prompt on an everyday word is not a repeat.
            if verdict.fire:
                skipped += 1
                repeated.add(hit.key)
                verdicts[hit.key] = "already injected in this session"
            else:
                verdicts[hit.key] = verdict.reason
            continue
        scores[hit.key] = entry
        keywords = set(entry.get("keywords", [])) | set(hit.topics or hit.matched)
        entry.update(acc=acc, turns=turns, keywords=sorted(keywords)[:20])
        hit.acc = max(acc, threshold) if verdict.fire and hit.distinctive else acc
        hit.why = f"{hit.key}: {verdict.reason}"
        verdicts[hit.key] = verdict.reason
        if verdict.fire:
            eligible.append(hit)
    from .session import STATE_KEEP

    state.scores = dict(sorted(scores.items(), key=lambda kv: -float(kv[1]["acc"]))[:STATE_KEEP])
    top: list[dict[str, object]] = [
        {
            "key": h.key,
            "score": round(h.score, 3),
            "acc": round(h.acc, 3),
            "matched": h.matched,
            "verdict": verdicts.get(h.key, ""),
        }
        for h in hits[:5]
    ]
    # A memory named by its id leads; then the strongest accumulated score.
    eligible.sort(key=lambda h: (h.exact_id, h.acc), reverse=True)
    if eligible:
        best = eligible[0].acc
        # Tag-alongs far below the best hit are noise, not memory.
        eligible = [h for h in eligible if h.exact_id or h.acc >= 0.5 * best][:max_hits]
    return GateResult(eligible, top, skipped, bool(hits) and hits[0].key in repeated)
