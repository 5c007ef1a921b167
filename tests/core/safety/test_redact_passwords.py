"""Passwords in plain words and on command lines (core/safety/passwords.py, in redact.py's one
table): what issue 39 found passing the memory guard and `export --redact`, in both languages,
and the prose about passwords that holds none and must stay as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_tui.core.memory.guard import refusal
from jarvis_tui.core.safety.redact import REDACTED, redact, secret_in

ROOT = Path(__file__).resolve().parents[3]

# (text, the password that must be gone, what must remain)
SAID = [
    ("the prod db password is Hunter2-prod!", "Hunter2-prod", "the prod db password is"),
    ("passphrase correcthorse", "correcthorse", "passphrase"),
    ("the passphrase correcthorse, don't lose it", "correcthorse", "don't lose it"),
    ("the password was Tr0ub4dor&3 until yesterday", "Tr0ub4dor&3", "until yesterday"),
    ("my password is letmein.", "letmein", "my password is"),
    ("Password is qwerty123.", "qwerty123", "Password is"),
    ("the password for root is toor1234", "toor1234", "the password for root is"),
    ("the wifi password is 'correct horse'", "correct horse", "the wifi password is"),
    ("the password got changed to N3wPass!", "N3wPass", "changed to"),
    ("pw: Hunter22", "Hunter22", "pw:"),
    ("pwd is s3cr3tz", "s3cr3tz", "pwd is"),
    ("PASSCODE: 884213", "884213", "PASSCODE:"),
    ("the password's Hunter2x", "Hunter2x", "the password's"),
    ("the password is: Hunter2x", "Hunter2x", "the password is:"),
    ("密码是Hunter2prod", "Hunter2prod", "密码是"),
    ("数据库密码是 Hunter2-prod！", "Hunter2-prod", "数据库密码是"),
    ("密码：S3cretP4ss", "S3cretP4ss", "密码："),
    ("密码: S3cretP4ss", "S3cretP4ss", "密码:"),
    ("密码为abc12345", "abc12345", "密码为"),
    ("口令是 opensesame", "opensesame", "口令是"),
    ("root 的密码是 toor1234，别告诉别人", "toor1234", "，别告诉别人"),
    ("账号 admin 密码 Adm1n2024", "Adm1n2024", "账号 admin 密码"),
    ("密码 = abc123", "abc123", "密码 ="),
    ("WiFi 密码 12345678", "12345678", "WiFi 密码"),
    # The second hostile pass of issue 39: what Chinese puts between 密码 and its value besides
    # 是, its corner-bracket quotes, and English words between "password" and "is".
    ("我的密码就是hunter2", "hunter2", "我的密码就是"),
    ("测试环境的密码都是 Hunter22", "Hunter22", "密码都是"),
    ("数据库密码改成了Hunter2!", "Hunter2", "数据库密码改成了"),
    ("密码设为 abc12345", "abc12345", "密码设为"),
    ("把密码设置为abc12345，然后重启", "abc12345", "，然后重启"),
    ("密码是「hunter2」", "hunter2", "密码是"),
    ("密码是『correct horse』", "correct horse", "密码是"),
    ("密码\u3000：\u3000hunter22", "hunter22", "密码\u3000："),
    ("the password for the prod db is Hunter2-prod!", "Hunter2-prod", "the prod db is"),
    ("the password to the staging box is S3cretP4ss", "S3cretP4ss", "staging box is"),
    ("the password for the account was changed to N3wPass!", "N3wPass", "changed to"),
    ("Password → Hunter2-prod!", "Hunter2-prod", "Password →"),
    ("password -> Hunter2-prod", "Hunter2-prod", "password ->"),
]

# Letters and digits as an input method types them in full-width mode, or a styled document
# shows them: NFKC (and a model's tokenizer) reads each as the ASCII one.
WIDE = [
    ("ｐａｓｓｗｏｒｄ is Hunter2-prod!", "Hunter2-prod", "ｐａｓｓｗｏｒｄ is"),
    ("the password is ｈｕｎｔｅｒ２-prod!", "ｈｕｎｔｅｒ２", "the password is"),
    ("密码：ｈｕｎｔｅｒ２，别外传", "ｈｕｎｔｅｒ２", "，别外传"),
    ("my key is ｓｋ-proj-" + "ａｂｃｄ１２３４" * 4, "ａｂｃｄ１２３４", "my key is"),
    ("ｇｈｐ＿" + "ａ" * 36 + " is the token", "ａａａａ", " is the token"),
    ("𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝: 𝐒𝟑𝐜𝐫𝐞𝐭𝐏𝟒𝐬𝐬", "𝐒𝟑𝐜𝐫𝐞𝐭𝐏𝟒𝐬𝐬", "𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝: "),
    ("mysql -uroot -pＳ３ｃｒｅｔＰ４ｓｓ", "Ｓ３ｃｒｅｔ", "mysql -uroot -p"),
]

TYPED = [
    ("mysql -u root -pS3cretP4ss", "S3cretP4ss", "mysql -u root -p"),
    ("mysqldump -uroot -pS3cretP4ss app > dump.sql", "S3cretP4ss", "app > dump.sql"),
    ("mysql -h db -u app -p'S3cret P4ss' app", "S3cret P4ss", "-u app -p"),
    ("mysql -u root --password=S3cretP4ss db", "S3cretP4ss", "db"),
    ("deploy --password S3cretP4ss --env prod", "S3cretP4ss", "--env prod"),
    ("sshpass -p S3cretP4ss ssh root@host", "S3cretP4ss", "ssh root@host"),
    ("sshpass -pS3cretP4ss ssh root@host", "S3cretP4ss", "ssh root@host"),
    ("redis-cli -h cache -a S3cretP4ss ping", "S3cretP4ss", "ping"),
    ("curl -u admin:S3cretP4ss https://x.example/api", "S3cretP4ss", "curl -u admin:"),
    ("curl --user 'admin:S3cret P4ss' https://x.example", "S3cret P4ss", "https://x.example"),
    ('psql "host=db user=app password=S3cretP4ss dbname=app"', "S3cretP4ss", "dbname=app"),
    ("htpasswd -b /etc/nginx/.htpasswd alice S3cretP4ss", "S3cretP4ss", "alice"),
    ("htpasswd -nb alice S3cretP4ss && reload", "S3cretP4ss", "&& reload"),
    ("deploy --token S3cretP4ss9 --env prod", "S3cretP4ss9", "--env prod"),
    ("cli --api-key 'k3y with space' run", "k3y with space", "run"),
]


@pytest.mark.parametrize("text, password, kept", SAID + TYPED, ids=[t for t, _, _ in SAID + TYPED])
def test_a_password_said_or_typed_is_hidden(text, password, kept):
    shown = redact(text)
    assert password not in shown and REDACTED in shown, shown
    assert kept in shown
    assert secret_in(text) is not None
    assert refusal(text) is not None, "the memory guard let it in"
    assert redact(shown) == shown  # what is hidden once stays as it is


@pytest.mark.parametrize("text, password, kept", WIDE, ids=[t for t, _, _ in WIDE])
def test_a_secret_in_full_width_or_styled_letters_is_hidden_and_the_rest_kept_as_written(
        text, password, kept):
    shown = redact(text)
    assert password not in shown and REDACTED in shown, shown
    assert kept in shown, "what is not the secret stays as the user wrote it"
    assert secret_in(text) is not None
    assert refusal(text) is not None, "the memory guard let it in"


# Prose about passwords, and commands that ask for one: none of them holds a password.
ABOUT_PASSWORDS = """\
reset your password
the password manager
password policy
I forgot my password
the password is stored in Vault
the password is in 1Password
the password is in the password manager
Please enter your password.
The password is wrong.
The password is too short, it needs at least 12 characters.
Your password must contain a digit and a symbol.
The password was rejected by the server.
Passwords are hashed with bcrypt before they are stored.
Use a password manager like Bitwarden or 1Password.
The passphrase protects the private key on disk.
I changed my password yesterday.
My password expired last week, so I reset it.
We rotate the database password every 90 days.
The password for the admin account is in the team vault.
Is the password case-sensitive?
The password is case-sensitive.
The password is the same as the one for staging.
The password is auto-generated on first boot.
password123 is a terrible password.
He typed his password twice and it still failed.
The passcode is sent by SMS.
He said the password was fine.
a password-protected zip file
Set PGPASSWORD in the environment instead of passing it on the command line.
mysql -u root -p
mysql -u root -p app
mysql --password app_db -u root
curl -u admin https://example.com/api
ssh -p 2222 deploy@host
pytest -p no:randomly
mkdir -p build/out
run pwd first, then ls
pwd is /home/me
the --token flag takes the value from the environment
mysql -u app -p"$MYSQL_PWD" app
deploy --token "$DEPLOY_TOKEN"
htpasswd -c /etc/nginx/.htpasswd alice
密码错误
密码不能为空
修改密码
密码是必填项
密码是什么？
密码为空
口令错误
请输入密码
忘记密码了
密码为什么不对
密码是在哪里设置的
密码在 1Password 里
密码已经改过了
密码是对的
密码太短了，至少需要 12 位
密码必须包含数字和符号
数据库密码每 90 天轮换一次
密码保存在 Vault 里，不要写进配置文件
密码是 Vault 里那个
密码学是一门很深的学问
设置密码时请使用密码管理器
用户名或密码不正确，请重试
我昨天改了密码
口令保护了私钥
密码就是为了保护账号
密码改成了什么？
密码设置为空
密码设为 required
密码是「必填项」
The password for the admin account is required.
Enter the password to continue.
The password at the login prompt is required.
Ｐａｓｓｗｏｒｄ ｐｏｌｉｃｙ：至少 12 位
全角的ｐａｓｓｗｏｒｄ一词
""".splitlines()


@pytest.mark.parametrize("text", ABOUT_PASSWORDS)
def test_prose_about_passwords_stays(text):
    assert redact(text) == text
    assert refusal(text) is None


def test_natural_text_in_both_languages_stays():
    """bench/data's natural prose and code (Chinese, English, mixed): no paragraph changes."""
    paragraphs = [p for f in sorted((ROOT / "bench" / "data").glob("*.txt"))
                  for p in f.read_text(encoding="utf-8").splitlines() if p.strip()]
    assert len(paragraphs) > 700
    assert [p[:80] for p in paragraphs if redact(p) != p] == []


@pytest.mark.parametrize("blob", ["password " * 40_000, "password is " * 30_000, "密码是" * 60_000,
                                  "curl -u a " * 30_000, "--token " * 40_000,
                                  "mysql --password x " * 20_000, "passphrase " + " " * 200_000],
                         ids=range(7))
def test_many_names_take_linear_time(blob):
    """Each rule is anchored at a name and reads a bounded way back: at this size a rule that
    read the text again per name would hold the test for hours (no clock is read here)."""
    unchanged = redact(blob) == blob
    assert unchanged
