"""The developer's glossary behind recall_words: the nouns and verbs of software work and of the
workplace around it, in Chinese and English, from general vocabulary (not from any question).

One entry a line: a Chinese word, then its English words in their plain form
(the question's "retries", "configured" find "retry", "config"). Recall keys a word by the
index's term for it, a character pair: a two-character word is its own, a longer one its last
pair (数据库 -> 据库, 供应商 -> 应商: the head of a Chinese compound comes last), or the pair
written after a slash where the last is a word of its own (白名单/白名: 名单 is "list"). A pair
may stand under several words and an English word under several pairs: both are read as one.
"""

ENTRIES = """
服务 service server
服务器 server
航班 flight
机票 flight ticket
预算 budget
电话 phone
延迟 latency
耗时 latency duration
日志 log
部署 deploy deployment
测试 test testing
配置 config configuration configure settings
仓库 repo repository warehouse
数仓 warehouse
分支 branch
缓存 cache
会话 session
密码 password
接口 api endpoint interface
机器 machine host box
主机 host
集群 cluster
网关 gateway
队列 queue
任务 job task
迁移 migration migrate
备份 backup
监控 monitoring monitor dashboard
告警 alert
证书 certificate cert
域名 domain
版本 version
发布 release publish rollout
上线 launch release
回滚 rollback revert
超时 timeout
重试 retry
索引 index
数据库 database db
数据 data
登录 login
支付 payment
订单 order
账单 billing invoice
邮件 email mail
供应商 vendor supplier
合同 contract
会议 meeting
客户 customer client
出差 trip travel
酒店 hotel
截止 deadline
内存 memory
磁盘 disk
工单 ticket issue
镜像 image mirror
容器 container
节点 node
构建 build
环境 environment env
生产 production prod
线上 production prod online
预发 staging
吞吐 throughput
并发 concurrency concurrent
负载 load
值班 oncall
负责人 owner lead
账号 account
账户 account
沙箱 sandbox
通知 notification notify
集成 integration integrate
提交 commit submit
拼写 spelling spell
注释 comment
评论 comment review
格式 format formatting
灰度 rollout canary gradual
只读 read readonly
压测 load benchmark stress
结论 conclusion
理由 reason
原因 reason cause
功能 feature function
函数 function
方法 method
变量 variable
参数 parameter argument param
返回 return
类型 type
字段 field
表格 table
数据表 table
键名 key
主键 key
密钥 key secret
令牌 token
权限 permission access
角色 role
团队 team
组长 lead
经理 manager
同事 colleague
老板 boss
运维 ops operations
开发 development developer dev
前端 frontend
后端 backend
客户端 client
服务器端 server
终端 terminal
文档 doc documentation
说明 description readme
描述 description
依赖 dependency
升级 upgrade
降级 downgrade
安装 install
卸载 uninstall
编译 compile
打包 package bundle
包管理/包管 package
模块 module
组件 component
插件 plugin
框架 framework
库存 inventory stock
类库 library
代码 code
源码 source
评审 review
审查 review audit
审计 audit
安全 security secure
漏洞 vulnerability
加密 encryption encrypt
解密 decrypt
签名 signature sign signing
算法 algorithm
哈希 hash
校验 checksum validate validation
验证 verify validation auth
认证 authentication auth
授权 authorization authorize
鉴权 auth authorization
会员 member membership
订阅 subscription subscribe
消息 message
事件 event
埋点 tracking event
回调 callback
钩子 hook webhook
请求 request
响应 response
报错 error
错误 error mistake
异常 exception
崩溃 crash
故障 outage incident failure
事故 incident
修复 fix
补丁 patch
问题单 issue
需求 requirement
规范 convention guideline spec
规则 rule
约定 convention
风格 style
命名 naming name
名字 name
名称 name
标签 tag label
标题 title
模板 template
页面 page
按钮 button
界面 ui interface
样式 style css
图片 image picture
截图 screenshot
视频 video
端点 endpoint
协议 protocol
网络 network
防火墙/防火 firewall
代理 proxy
均衡 balancer balancing
反向 reverse
证明 proof
实例 instance
虚拟 virtual
云端 cloud
存储 storage store
存储桶 bucket
对象 object
副本 replica copy
主库 primary master
从库 replica
分片 shard sharding
分区 partition
表结构/表结 schema
结构 structure schema
模型 model
查询 query
慢查询/慢查 slow
阈值 threshold
上限 limit max maximum
下限 minimum
限流 rate limit throttle
限制 limit
配额 quota
速率 rate
频率 frequency rate
次数 count
数量 count number
比例 ratio percentage
百分比/百分 percent
开关 flag toggle switch
特性 feature
标志 flag
默认 default
选项 option
设置 settings setting
参考 reference
定时 cron scheduled timer
计划 plan schedule
调度 scheduler schedule scheduling
夜间 nightly night
每晚 nightly
每天 daily
每周 weekly
凌晨 night
周期 period cycle
轮换 rotation rotate
轮值 rotation
到期 expire expiry
过期 expire expired stale
续期 renew
刷新 refresh
重启 restart reboot
启动 start startup boot
停止 stop
关闭 close shutdown disable
开启 enable
启用 enable
禁用 disable
删除 delete remove
清理 cleanup clean
新增 add
添加 add
修改 change modify edit
更新 update
替换 replace
合并 merge
冲突 conflict
拉取 pull fetch
推送 push
克隆 clone
标记 mark tag
变更 change
差异 diff
补充 supplement
重构 refactor refactoring
优化 optimize optimization
性能 performance perf
基准 benchmark baseline
指标 metric metrics
报表 report
报告 report
统计 statistics stats
分析 analysis analytics analyze
可视 visualization
看板 dashboard board
面板 dashboard panel
图表 chart graph
采集 collection collector collect
收集 collect collection
上报 report
追踪 tracing trace tracking
链路 tracing trace
抓包 capture
调试 debug debugging
断点 breakpoint
堆栈 stack stacktrace
栈帧 frame
线程 thread
进程 process
协程 coroutine
异步 async asynchronous
同步 sync synchronous
阻塞 blocking block
死锁 deadlock
泄漏 leak
溢出 overflow
连接 connection connect
连接池 pool
套接 socket
超载 overload
熔断 breaker circuit
兜底 fallback
容灾 disaster
高可用/高可 availability
可用 available availability
扩容 scale scaling
缩容 scale
弹性 elastic autoscaling
自动 automatic auto
手动 manual
流水 pipeline
流水线 pipeline
持续 continuous
交付 delivery
打印 print
输出 output
输入 input
文本 text
字符 character char
字符串 string
数组 array list
列表 list
字典 dict dictionary map
映射 mapping map
集合 set collection
整数 integer int
浮点 float
布尔 boolean bool
时间 time
时区 timezone
日期 date
时间戳 timestamp
毫秒 millisecond ms
秒钟 second
分钟 minute
小时 hour
编码 encoding encode
解码 decode
序列 serialization serialize sequence
序列化 serialize
反序列化/反序 deserialize
解析 parse parsing parser
生成 generate generation
渲染 render rendering
布局 layout
响应式 responsive
适配 adapter adapt
兼容 compatible compatibility
导入 import
导出 export
上传 upload
下载 download
备注 note remark
记录 record log
笔记 note notes
总结 summary
摘要 summary abstract
草稿 draft
计算 compute calculation
估算 estimate
成本 cost
费用 cost fee
价格 price pricing
付款 payment pay
退款 refund
发票 invoice
税务 tax
财务 finance
法务 legal
合规 compliance
隐私 privacy
外包 contractor outsourcing
招聘 hiring recruiting
面试 interview
入职 onboarding
离职 offboarding
培训 training
周报 weekly report
日报 daily report
例会 standup meeting
站会 standup
复盘 retrospective postmortem retro
排期 schedule planning
迭代 sprint iteration
里程 milestone
产品 product
设计 design designer
设计师 designer
测试员 tester
架构 architecture architect
架构师 architect
工程 engineering engineer project
工程师 engineer
技术 technical tech
负责 responsible owner
对接 contact liaison
联系 contact
负责人 owner
项目 project
客服 support
支持 support
帮助 help
反馈 feedback
建议 suggestion suggest recommend
偏好 preference prefer
习惯 habit prefer
喜欢 like prefer
顺序 order sequence
排序 sort order ranking
严重 severity severe critical
优先 priority
紧急 urgent
重要 important
搜索 search
检索 retrieval search
排名 ranking rank
推荐 recommendation recommend
过滤 filter
分页 pagination page
语言 language
中文 chinese
英文 english
英式 british
美式 american
文案 copy wording text
翻译 translation translate
本地 local locale
国际 international
地区 region
区域 region zone
机房 datacenter
跳板 bastion jump
堡垒 bastion
白名单/白名 allowlist whitelist
黑名单/黑名 blocklist blacklist
名单 list
凭证 credential credentials
类名 class
行宽 width line
行数 lines
缩进 indentation indent
空格 space spaces whitespace
换行 newline
括号 bracket parenthesis
引号 quote quotes
分号 semicolon
检查 check lint inspect
格式化 formatter format
静态 static
单元 unit
单测 unit
用例 case
用户 user
覆盖 coverage cover
断言 assert assertion
模拟 mock simulate fake
夹具 fixture
不稳 flaky unstable
稳定 stable stability
偶发 intermittent flaky
复现 reproduce repro
回归 regression
冒烟 smoke
端到端/端到 e2e
压力 stress load
基线 baseline
样本 sample
数据集 dataset
训练 training train
推理 inference
提示 prompt hint message
提示词 prompt
向量 vector embedding
嵌入 embedding embed
分词 tokenizer tokenize
上下文 context
窗口 window
回答 answer reply
回复 reply
问答 qa
注入 injection inject
接收 receive
发送 send
投递 delivery deliver
死信 dead letter
分发 fanout dispatch distribution
广播 broadcast
订阅者 subscriber
生产者 producer
消费 consumer consume
费者 consumer
主题 topic
事务 transaction
回放 replay
幂等 idempotent idempotency
重复 duplicate repeat
去重 dedup deduplicate
一致 consistent consistency
锁定 lock
加锁 lock
解锁 unlock
等待 wait
超额 overage
后台 background admin
前台 foreground
"""
