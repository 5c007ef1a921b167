"""The words of a working session in the other language, for recall: "那个服务的端口" asks about
"the service listens on 8443", "which database did we pick" about "我们决定用 PostgreSQL 存会话".

Our users write in Chinese and English, and ask in whichever comes to hand, so a question and
the turn it is about often share no word. A small glossary of the nouns a developer's session is
made of maps each to its other-language terms as the index makes them (an English word, a
Chinese pair), and recall counts a match in either as the same word.
"""

from __future__ import annotations

# Chinese term (a pair, as the index makes them; the distinctive pair of a longer word) and its
# English words, which the index stems (service, services). Not the words that name a shape
# (端口, 文件, 命令): recall_shapes answers those in any language already, weighed as a shape.
_PAIRS = """
服务 service server
务器 server
航班 flight
机票 flight ticket
预算 budget
电话 phone
延迟 latency
耗时 latency duration
日志 log logs
部署 deploy deployment
测试 test tests testing
配置 config configuration settings
仓库 repo repository
分支 branch
缓存 cache
会话 session
密码 password
接口 api endpoint
机器 machine host box
主机 host
集群 cluster
网关 gateway
队列 queue
任务 job task
迁移 migration
备份 backup
监控 monitoring dashboard
告警 alert alerts
证书 certificate cert
域名 domain
版本 version
发布 release
上线 launch release
回滚 rollback
超时 timeout
重试 retry
索引 index
据库 database db
用户 user users
登录 login
支付 payment payments
订单 order orders
账单 billing invoice
邮件 email mail
应商 vendor supplier
合同 contract
会议 meeting
客户 customer client
出差 trip travel
酒店 hotel
截止 deadline
内存 memory
磁盘 disk
工单 ticket
镜像 image
容器 container
节点 node
构建 build
环境 environment
生产 production prod
预发 staging
吞吐 throughput
并发 concurrency
负载 load
值班 oncall
责人 owner
"""

_TO_EN: dict[str, tuple[str, ...]] = {}
_TO_ZH: dict[str, list[str]] = {}
for _line in _PAIRS.strip().splitlines():
    _zh, *_en = _line.split()
    _TO_EN[_zh] = tuple(_en)
    for _word in _en:
        _TO_ZH.setdefault(_word, []).append(_zh)


def other_language(term: str) -> tuple[str, ...]:
    """The index terms that say `term` in the other language ("" when the glossary has none)."""
    if found := _TO_EN.get(term) or _TO_ZH.get(term):
        return tuple(found)
    for ending in ("es", "s"):  # the question's plural: the index stems, the glossary does not
        if term.endswith(ending) and (found := _TO_ZH.get(term[:-len(ending)])):
            return tuple(found)
    return ()
