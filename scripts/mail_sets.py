"""Which public fixture sets the mail rules are tuned on, and which are held out (issue #41).

Split by whole project, fixed before any rule was changed: a rule may be shaped by
what the tuning sets show; the held-out sets are run only to report
(``scripts/measure_machine_mail.py`` and ``scripts/measure_new_text.py`` print
both, per set). Nothing of theirs is copied into this repository: each is read
from a ``git archive`` of the commit named here, in a scratch directory given on
the command line.

Second split (issue #41, second round): the first round's held-out sets
(BounceParser, bounce_email, redmine, crisp, mail-parser-reply) were read while
tuning, so they are tuning sets now. The held-out sets below were fetched and
recorded here, with their commits, before any rule of that round changed; they
come from projects no earlier round read: Mailman's bounce detector
(flufl.bounce), a Java bounce parser (osandum/bounce-parser), hunnysoft's mail
written with four mail programs (as shipped by zbateson/mail-mime-parser), and
three reply parsers with fixtures of their own (EdgeTier's Python port, a Ruby
parser for German mail, t2bot's JavaScript port). A body a held-out set shares
with a tuning set is measured only with the tuning set (the ports copy fixtures).
huan086/EmailReplyParser was added as held out after that round's rules were final, and recorded
before it was measured: a third check nothing was tuned to.

Fourth split: the misses of the second and third splits' text sets were read (and listed in
docs/reliability.md), so those sets can no longer judge the reader: tuning now. Four reply parsers no
round had read are held out instead, recorded here with their adapters and the reader's figures on them
before any rule changed: an Elixir port with German mail of its own (hellogustav), a Go parser that
builds every base mail by signature by quoted reply of its dataset (web-ridge, Dutch and English), a C#
port with Dutch Gmail and Outlook 2016 mail (bluee), and a Dart port with "abnormal" quote headers
(krishnaSoni2113's flutter package).

Fifth split: the fourth split's held-out text sets had their misses read (docs/reliability.md), so they
are tuning now. Four projects no round had read are held out instead, recorded here with their adapters
before any rule changed and measured once before tuning: a TypeScript quote stripper with text and HTML
samples of many clients (Crsk/unquotemail), Mailspring's quoted-HTML transformer and its real clients'
HTML mail (Foundry376/Mailspring), Firefox OS mail's quote chewer (mozilla-b2g/gaia-email-libs-and-more),
and griddler, the inbound-mail gem for Rails apps (thoughtbot/griddler). Those four held 92 distinct
bodies; four more were recorded after the round's rules were final and before they were measured (an F#
and a C# port with mail of their own, a Ruby extractor, a CoffeeScript stripper).

Sixth split: the fifth split's held-out sets had their misses read (docs/reliability.md), so they are
tuning now. Four projects no round had read are held out instead, recorded here with their adapters
before any rule of that round changed, and measured once before tuning: a project tool's reply extractor
with real clients' mail (activecollab/EmailReplyExtractor), a code-review tool's mail parser
(Phabricator's ``PhabricatorMetaMTAEmailBodyParser``), an issue tracker's mail gateway (Roundup's
``parseContent``), and quotequail's own tests (closeio/quotequail: the library is measured beside ours,
its fixtures never were).

Seventh split: the sixth split's held-out sets had their misses read (docs/reliability.md), so they are
tuning now, with the fifth's. Seven projects no round had read are held out instead, recorded here with
their adapters before any rule of that round changed, and measured once before tuning: forks and ports of
the reply parsers whose own fixtures no set holds (Landwirtcom's Node port "with enhancements from forks",
Teamtailor's Ruby fork with Swedish, Danish and Croatian mail, apptentive's Ruby fork, randock's PHP fork of
willdurand's parser, dspangenberg's JavaScript fork with "tricky" mail, Plain's Node
fork) and a small JavaScript stripper with input and output files (Like-Falling-Leaves/parse-reply). The
ports copy each other's fixtures: only the bodies no tuning set holds are measured, 43 of them. A second
part was recorded after that first measurement and before any rule changed: two more Ruby forks with mail
of their own (rudirocks: German, multi-line headers; unloved: Gmail, Mail.ru, Yandex, Thunderbird), a
JavaScript port (vu0tran), two forks of the Python port (jakul's nhs.net mail and signatures, ScultureAI's
header words in the body), and a PHP fork with Swedish and Windows 10 Mail (FredrikAnkarang): 124 distinct
bodies in all. (lawrencepit/email_reply_parser and dimiro1/reply were looked at too: every body of theirs
is in another set.)

Eighth split: the seventh split's held-out sets had their misses read (docs/reliability.md), so they are
tuning now. The reply parsers' forks and ports are all read (their fixtures copy each other's), so the sets
held out this time come from elsewhere, recorded here with their adapters before any rule of that round
changed and measured once before tuning: a deliberation platform's mailbox (assembl: the quote-stripping
tests of its ``AbstractMailbox``, French Outlook, Apple Mail, Thunderbird and Gmail mail, and a maildir of
one debate's thread), a Java mail server's reply scrubber (KritikalFabric/corefabric.io's
``Rfc822PlainReplyFormats`` tests, read from that commit's file), and the mail client notmuch's test
corpora: 53 messages of its own mailing list and 210 of LKML threads. The thread corpora state no new text;
their history is what the thread's earlier messages hold, found by following ``In-Reply-To`` and
``References`` (``scripts/measure_new_text.py``'s ``thread_cases``): a measure of the reader's first rule
that no reply rule wrote. A second part was recorded after that round's rules were final and before they
were measured (the first states a whole text for 19 bodies only): an email agent's quote remover with tests
of its own (mitija/email_agent) and two more corpora of real mail, the mail indexer mu's test data and
Mailpile's test maildir, read as the thread corpora are.

Ninth split: the eighth split's held-out sets had their misses read (docs/reliability.md), so they are
tuning now. Held out instead, recorded here with their adapters before any rule of that round changed and
measured once before tuning, projects in ecosystems no round had read whose tests state the text shown:
Delta Chat's Rust core (chatmail/core: the text its mime parser and its ``simplify`` show for a mail, in
``mimeparser_tests.rs``, ``receive_imf_tests.rs`` and ``simplify.rs``), an Elixir app's reply parser
(thoughtbot/constable) and a Go port of email_reply_parser with tests of its own (kvannotten/mailstrip:
only its own fixtures; the rest are email_reply_parser's). That first part states a whole text for 28
bodies, so a second part was recorded after that round's rules were final and before they were measured: a
Kotlin quote parser's tests on real, anonymised mail (JetBrains/email-parser: the quote header each
``QuoteParser*Specs.kt`` says its parser must find in an ``.eml`` of its test resources).
Tenth split: the ninth split's held-out sets had their misses read (docs/reliability.md), so they are
tuning now. Held out instead, recorded here with their adapters before any rule of that round changed and
measured once before tuning, two projects no round had read whose tests state the text shown: a forge's
incoming-mail handler (go-gitea/gitea: ``TestExtractReply``, the table of its built-in reply parser,
which replaced dimiro1/reply at that commit; read from the snapshot of a fork that holds the upstream
commit, gitea's own being over the size a snapshot may have) and a Rails engine turning German mail
replies into comments (wegatech/replyr: its ``email_test.rb``). Both are held out (all of this round's
new sources). No machine-mail set of theirs: replyr's two bounces are mikel/mail's ``report_422.eml`` and
``report_530.eml`` (a tuning set) again. A second part was recorded after that round's rules were final
(7e05419) and before they were measured: a Go port of email_reply_parser with Outlook and phone mail of its
own (recapco/emailreplyparser: the ``ParseReply`` equalities of ``email_test.go``) and a mail client's
message preview, which leaves quotes and signatures out (thunderbird/thunderbird-android:
``PreviewTextExtractorTest.kt``'s quote and signature tests). A machine-mail set was then recorded before
it was measured (the screening did not change this round): a C# bounce detector's fixtures
(rgl/MailBounceDetector: five bounces and a system account's test message).

Eleventh split: the tenth split's held-out sets (gitea, replyr, recapco, thunderbird, mailbouncedetector)
had their misses read (docs/reliability.md), so they are tuning now. Held out instead, recorded here with
their adapters before any rule of that round changed and measured once before tuning, two projects no
round had read: a webmail client's conversation view, which shows a message's original content and folds
what it quotes (Zimbra/zm-web-client: every entry of ``UtGetOriginalContent_data.js``, 32 bodies, 13 of
them HTML), and, for machine mail with people's mail among it, a customer-support inbox's mail fixtures
(chatwoot/chatwoot: ``spec/fixtures/files/*.eml``, classed by its own specs — ``auto_reply?``, the
bounce and IMAP specs — and their headers; read from md-riaz/chatwoot's snapshot, which holds the upstream
commit, chatwoot's own being over the size a snapshot may have). Chatwoot's specs state no new text (its
messages keep the quote), so it is a machine-mail set only. Zimbra states a whole text for 32 bodies, so a
second part was recorded after that round's rules were final (ce5c80c) and before they were measured: an
iOS app showing Gmail threads as chat, the new words of each message only (Kevinmthau/esc-chatmail: the
``removeQuotes`` tests of ``PlainTextQuoteRemoverTests.swift``; its ``removeSignature`` tests are left out,
a second function whose contract, sign-offs and disclaimers removed, is not the reader's).

Twelfth split: the eleventh split's held-out sets (zimbra, esc-chatmail, chatwoot) had their misses read
(docs/reliability.md), so they are tuning now. Most of those misses were places where the peer's expected
text follows another contract than ours, so from this split on each source's adapter DECLARES, when it is
recorded and from the source's own README, tests or code (never from our reader's output on it), where its
contract differs from ours (``CONTRACT_DIFFERENCES`` below, each with the place the source states it);
``scripts/measure_new_text.py`` prints, beside the raw exact figure, "exact under our contract": the
comparison after only those declared differences are applied. Held out, recorded with their adapters and
declarations before they were measured, three projects no round had read whose tests state the text a reply
reader should show: a Q&A forum that takes answers by mail (ASKBOT/askbot-devel: its
``test_email_parsing.py``), a helpdesk/PSA turning mail replies into ticket comments (Nine-Minds/alga-psa:
its ``replyParser`` tests and fixtures) and a fork of crisp's parser (clearfeed/email-reply-parser: its
``test.js``; most of its bodies are crisp's and dspangenberg's, measured with them). That is 20 bodies,
under the 50 aimed for (loomio's and zulip's snapshots are over the size a snapshot may have;
JayDaley/email-reply-extractor's cannot be had). So a second part was recorded after the first was measured
once and before it was measured: GitLab's reply-by-email parser (``Gitlab::Email::ReplyParser``, "inspired
in great part by Discourse's Email::Receiver": its ``reply_parser_spec.rb`` on its
``spec/fixtures/emails``), read from xinminlabs/gitlabhq's snapshot, a fork holding GitLab's history to
December 2017 (GitLab's own snapshots are over the size a snapshot may have): 12 bodies, 32 in all, still
under the 50 aimed for.

Thirteenth split: recorded with their adapters and declarations before they were measured, three projects no
round had read whose tests state what a reply reader should keep: the reuse network Freegle's server, which
turns people's mail replies to a post into chat messages (Freegle/iznik-server: ``testStripQuoted`` of its
``MessageTest.php``, 19 messages of real clients and the whole text each must leave), a ChiliProject issue
tracker's plugin turning mail replies into issue comments (tipitnet/chiliproject's
``chiliproject_enhanced_incoming_mail``: the ``remove_thread!`` tests on its Gmail, Mac Mail, Outlook,
Postbox, Thunderbird and Zimbra replies, which state what the comment keeps and what must be gone, no whole
text; its samples are the plugin's own, not Redmine's fixtures), and the Tempo mail app's message extractor
(yourtempo/tempo-email-parser: its ``prepareMessage`` fixtures and ``removeQuotations`` tests, HTML mail and
the HTML left once quotes and signatures are out). What was looked at and not kept, and why, is in the
message of the commit that recorded them (moodle's snapshot is over the size a snapshot may have; Proton's
blockquote tests state only that a quote is found, not where). Its figures were taken at the reader
written from the twelfth split's misses alone (ad32db5), and then its misses were read and tuned on
(fc996c4): the twelfth and thirteenth splits are tuning now, and the next round needs sets no round has read.

Fourteenth split: recorded with their adapters and declarations before they were measured, four projects no
round had read whose tests state the text a reply holds: an AI mail assistant that reads the reply in each
message it sorts, drafts or tracks (elie222/inbox-zero: ``extractEmailReply``, ``parseMessageReply``,
``emailToContent`` with ``removeForwarded``, ``parseReply``, ``snippetRemoveReply`` and the
``calculateSimilarity`` tests that find a sent reply equal to the stored draft once quotes, forwards and the
provider's signature are out; Gmail and Outlook HTML and plain text), the link aggregator Lobsters, whose
mailing-list mode turned mail replies into comments (lobsters/lobsters: ``email_parser_spec.rb`` on its
``inbound_emails``, read at the last commit that holds them), the Thunderbird add-on that shows a thread as a
conversation and folds what each message quotes (thunderbird-conversations: ``quoting.test.mjs``), and the
help desk FreeScout (``ReplySeparationTest.php``: Outlook replies). That is 43 bodies, 42 with a whole text,
under the 50 aimed for: the projects this round was pointed to had no such tests of their own or could not be
had (forgejo's incoming mail tests state no reply text, it uses dimiro1/reply; Gerrit's snapshot is over the
size a snapshot may have, and the one copy under it, dmgerman/gerrit, is a srcML transform of its source, not
the source; GLPI's collector only cuts between its own markers; OpenProject's mail handler cuts at
configured delimiters on Redmine's fixtures). What was looked at and not kept, and why, is in the message of
the commit that recorded them. Measured once at the reader of fc996c4 (30/42 exact, history as new 1),
then its misses were read and tuned on, as the machine-mail part's were: tuning sets since, like every
split before them. The next round needs sets no round has read.

Fifteenth split: recorded with their adapters and declarations before they were measured, three projects no
round had read whose tests state the text a reply holds: the journal site Dreamwidth, where a reply by mail
to a comment notification becomes a comment (dreamwidth/dreamwidth: ``DW::CleanEmail->nonquoted_text`` in
``t/cleaner-email.t``: Gmail, Android, BlackBerry and German webmail replies, the text each must leave), the
University of Kentucky's help desk Triage, where a mail reply to a ticket becomes a note (mpaddock/Triage:
``extractReplyFromBody`` on the real replies of its ``hive:email-ingestion`` package: Gmail, Outlook Web App,
iPhone), and Alaveteli, the freedom-of-information site behind WhatDoTheyKnow, which publishes a public
body's mail reply with its quoted sections folded (mysociety/alaveteli: ``remove_quoted_sections`` on its
``email-folding-example`` replies of councils, police forces and ministries, and the ``.expected`` text each
must leave). That is 32 bodies, under the 50 aimed for: the projects this round was pointed to had no such
tests of their own, or theirs copy a set already read. What was looked at and not kept, and why, is in the
message of the commit that recorded them (a362027). Measured once at the reader of df4462e: 19/32 exact
(25/32 under our contract), history as new 0. Its misses, and the fifteenth machine-mail split's, were read
afterwards (84d94be tuned the reader on them): they are tuning sets now, like every split before them.

Sixteenth split: recorded with their adapters and declarations before they were measured, three projects no
round had read whose own tests state the text a reply holds: Monorail, the Chromium project's issue tracker,
where a mail reply to an issue notification becomes a comment (chromium/infra as xinghun61/infra holds it:
``emailfmt.StripQuotedText`` in ``appengine/monorail/framework/test/emailfmt_test.py``: quoted lines,
attributions of Gmail, of the tracker's own addresses and in French, forward and original-message lines,
signatures and sign-offs, the text each must leave), WriteIt, Ciudadano Inteligente's site for writing to
politicians, which publishes their mail replies as answers (ciudadanointeligente/write-it: its
``EmailHandler`` on real Gmail, iPad, Hotmail and ministerial replies in ``mailit/tests/fixture``, the text
or a phrase each must leave, or what it must not), and Gala, the University of Michigan's case-study
platform, where a mail reply to a comment notification becomes a comment (galahq/gala: its
``RepliesMailbox`` spec). That is 49 bodies. What was looked at and not kept, and why, is in the message of
the commit that recorded them (0e2feff). Measured once at the reader of 84d94be: 29/42 exact (36/42 under our
contract), history as new 0, words dropped 0; as HTML 25/42 (32/42). Measured against labels of our own
contract, before its misses were read: 41/45, history as new 1. Its misses were read then (stop 57): tuning
since.

Seventeenth split: recorded with their adapters and declarations before they were measured, four projects no
round had read whose tests state what a reply keeps: Odoo, the ERP whose chatter shows a mail reply with its
quotes and signature cut (Odoo 8.0's ``html_email_clean(…, remove=True)``: the ``TestCleaner`` tests of
the base module's ``test_mail.py`` on its ``test_mail_examples`` (Gmail, Thunderbird, Hotmail, three
MS Office replies, French text mail), what must stay and what must be gone, no whole text; read from
aimas/TuniErp-8.0, a renamed copy of Odoo 8.0, Odoo's own snapshot being 19 GB), Moodle, the learning
platform whose inbound message handlers turn a mail reply into a forum post (``remove_quoted_text`` on the
Evolution, Gmail, iOS Mail and Outlook 2013 replies of ``lib/tests/fixtures/messageinbound``, the plain
and the HTML part each with the text it must leave; read from winmagpantay/dps, a copy of Moodle 4.2.3,
Moodle's own snapshot being 1.36 GB), Bueda's Django toolkit django-comrade (``comrade.mail.filters``: its
quote and signature tests, what must stay and what must be gone) and the gem reply_parser
(excid3/reply_parser: its spec's bodies, HTML mostly, and the text each must leave). That is 41 bodies
(38 once white space is normalised), 14 with a whole text. What was looked at and not kept, and why, is in
the message of the commit that recorded them (834a0e1). Measured once at the reader of 61f398c: 12/14 exact
(12/14 under our contract), history as new 3 (comrade's built bodies), words dropped 1; as HTML 12/14
(12/14), history as new 4. Measured against labels of our own contract before its misses were read: 12/20,
history as new 3. Its misses were read then (stop 57): tuning since.

Eighteenth split: recorded with their adapters and declarations before they were measured, three projects
no round had read whose own tests state the text a reply leaves, with bodies of their own: the npm package
email-body-parser (Pine-Lime/email-body-parser, Pinenlime's "removes quotes, auto-signatures, and mailing
list footers while preserving human signatures": the ``cleanEmailContent`` and ``EmailBodyParser`` tests of
its ``tests`` and its README's example, Gmail and Outlook quote headers, a compressed Outlook header, mobile
footers, disclaimers, mailing-list footers and human signatures, each with the text it must leave or what
it must keep and what is quoted), Zapship's gem email_parser (Zapship/email_parser: the ``stripped_text``
and ``stripped_html`` its spec states for whole messages, Gmail, iPhone, Office 365 and a generic client's
HTML replies and two plain ones) and Tachikoma, an email service provider that cuts incoming mail to the
reply (SourceForgery/tachikoma: ``ExtractBodyKtTest``'s two replies, each with its whole text). That is 38
bodies, 34 with a whole text (4 of them HTML). What was looked at and not kept, and why, is in the message
of the commit that recorded them (c92aafd). Measured once at the reader of d7b448c: 19/34 exact (56 %),
20/34 under our contract (59 %), history as new 0, words dropped 2; as HTML the same. Which bodies were
missed was not read.

Eighteenth split, a second text part (k9-locales), recorded with its adapter (d8f155d) before it was
measured: a mail client's own words in every language it ships. Each reply a person writes with K-9 Mail
(Thunderbird for Android) is built as its code builds it (``TextQuoteCreator``, ``TextBodyBuilder``), in
each language of its string resources: the attribution line ("On <date>, <sender> wrote:") and the
Outlook-style header block (the separator, From, Sent, To, Subject) in the language, the date as Java
writes it for the language. The reply and the message answered are ours and the same in every language;
the words around them are the client's translators', which no round read (thunderbird's set is its
preview tests). The project is a tuning set's, so this part is held out by its files, not by its project:
a measure of the reader on languages, not on new mail. Measured once at the reader of 5de7559 (the same
rules/text.py as d7b448c): 82/122 exact (67 %), history as new 6, words dropped 0, 32 behind the unsure
marker; as HTML the same. The machine-mail part below was measured once at the screening of 5de7559:
machine answered 11/40 (spamassassin 9/33, pigeonhole 2/5, rt 0/2), people refused 0/94, machine mail
handed to a person 2/40.

Eighteenth split (machine mail): recorded with their rows in scripts/measure_machine_mail.py before they were
measured, three projects no round had read, each set's messages classed machine, person, list or other from
the project's own tests, fixture names and headers (never by the screening): Apache SpamAssassin (``t.rules``:
the messages its ``t.rules/run`` feeds to one rule each, to hit it or, named ``fp*``, to miss it, among them
its VBounce rules' bounces, challenge-response and virus-notice samples; and its ham, ``t/data/nice`` and
``t/data/welcomelists``; its 20_vbounce.cf rules were read before, its test data never), Dovecot's Sieve
engine Pigeonhole (the inline messages of its vacation tests, which assert whether the vacation action answers
each: not bulk, auto-submitted or X-Auto-Response-Suppress mail, nor a list post) and Best Practical's Request
Tracker (its test messages, a DSN its sendmail.t calls "the bounce" and the bulk message autogenerated.t calls
AutoGenerated; RT's transaction-quoting.t was looked at for the text splits, its mail fixtures never read).
284 files: 40 machine, 94 people's, 17 list posts, 133 other. What was looked at and not kept, and why, is in
the message of the commit that recorded them.

Nineteenth split (machine mail): recorded with their rows in scripts/measure_machine_mail.py before they were
measured, three projects no round had read, each set's messages classed machine, person, list or other from
the project's own tests, fixture names and headers (never by the screening): Stalwart's mail server
(stalwartlabs/mail-server: the DSNs its queue tests compare with the ones it builds, the messages of its
antispam ``bounce.test`` whose ``expect`` line names BOUNCE or not, and its SMTP test messages; its reports
are Stalwart's mail-auth's again, a set already measured), Schleuder, the encrypting mailing-list manager (its
``spec/fixtures/mails``: a bounce, the Debian BTS notices its message_spec must not take for bounces, people's
Thunderbird, Mutt and Exchange messages; its ``bounces`` are bounce_email's again) and Drupal's Inmail module
(as jungleran/inmail holds it: the bounces its DSN analyzers read, an out-of-office reply, a conversation's
messages and its display tests' messages). 134 files: 18 machine, 24 people's, no list post, 92 other (42 of
them files of sets already measured: bounce_email's 41, KumoMTA's RFC 3464 example; 4 of Schleuder's charset
fragments are mikel-mail's again). What was looked at and not kept, and why, is in the message of the commit
that recorded them. Measured once at the screening of 5de7559 (machine answered 1/18, people refused 1/24,
silently), then its misses were read and tuned on (58a31a0): tuning since.

Twentieth split (machine mail): recorded with their rows in scripts/measure_machine_mail.py before they are
measured, two projects no round had read for machine mail. Thunderbird's own test messages
(mozilla/releases-comm-central: ``mailnews/test/data``, its junk-filter, local-folder, compose and news test
data, and the messages of ``mail/test/browser`` and of its WebExtension API tests), each classed machine,
person, list or other from its tests, fixture names and headers (never by the screening): Bugzilla's
notifications (``bugmail10``, ``bugmail11``, ``SenderHeader``; the other ``bugmail`` files are one notice
again, edited for filter tests), a feed item as its feed reader stores it, a list digest (Precedence: list),
people's messages written in Thunderbird (its User-Agent) or IncrediMail (X-Mailer), and test messages whose
class no test states. 281 files: 4 machine, 42 people's, 1 list post, 234 other (copies within the set;
mail-mime-parser's two Outlook samples and flanker's MIME torture test again; drafts, templates, spoofing
tests, display and MIME test messages). With it OTOBO's test messages (RotherOSS/otobo, the OTRS fork: its
``scripts/test/sample`` PostMaster, EmailParser and PGP messages and the messages its LoopDetection.t must
take for a loop or answer): 86 files, 7 machine, 18 people's, 1 list post, 60 other. What was looked at and
not kept, and why, is in the messages of the commits that recorded them.

Nineteenth split (roundcube-locales, thunderbird-locales, claws-locales), recorded with their adapters before
they were measured: other mail clients' own words in every language they ship, built as k9-locales is. Each
plain-text reply a person writes with Roundcube webmail (roundcube/roundcubemail) is built as its
``program/actions/mail/compose.php`` builds it, in each language of ``program/localization``: the attribution
line ("On $date, $sender wrote:") over the "> " quote, bottom-posted (its default) and top-posted, and its
top-posting-without-indent header block ("-------- Original Message --------", Subject, Date, From, To) over
the message unquoted, in the language's labels, the date as its default ``date_long`` writes it (digits, the
same in every language): 86 languages (en_US among them), 258 bodies built, 208 once a body another language
gives already is left out. Each plain-text reply a person writes with Thunderbird desktop is built as its
``nsMsgCompose.cpp`` builds the header (mozilla/releases-comm-central), from its translations
(thunderbird/thunderbird-l10n, ``composeMsgs.properties``): for each reply header type ("#1 wrote:", its
default; "On #2 #3, #1 wrote:"; "#1 wrote on #2 #3:"; the "-------- Original Message --------" line) over the
"> " quote, the person's text below it (the default) or above it, the date and time in the language's Short
styles as Java writes them (Thunderbird writes them with ICU; both from CLDR): 72 languages (en-US among
them), 576 bodies built, 504 kept. Each reply a person writes with Claws Mail (eworm-de/claws-mail, a mirror
of its git) is its default reply template ("On %d\\n%f wrote:\\n\\n%q\\n%X") as each language's ``po`` file
translates it, filled as its ``compose_quote_fmt`` fills it (the Date header as it is, the From header,
the "> " quote, the person's text at the cursor): 36 languages (English among them), 29 bodies once a body
another language gives already is left out. The reply and the message answered are k9-locales' and the same
in every language. No round read these projects' translations or composition code (the thunderbird set is
thunderbird-android's preview tests). What was looked at and not kept, and why, is in the messages of the
commits that recorded them. Measured once at the reader of 5be8aa3 (the shipped one), before any body's
output was read: roundcube-locales 192/208 exact, history as new 1 (as HTML 193/208, 0); thunderbird-locales
314/498, history as new 6 (six of its bodies are ones a tuning set holds, measured with it); claws-locales
24/29, history as new 0; held out 530/735 (72 %), history as new 7, words dropped 0, 11 behind the unsure
marker (as HTML 531/735, 6). Reading the misses found six of the seven "history as new" to be the checker's
(b568b6e: the reader's "[quoted text]" line under a leftover attribution; at the same reader 530/735, 1).
Its misses were then tuned on (3956a36): 729/735, history as new 0. Tuning since.

Twentieth split (sogo-locales, imp-locales, cypht-locales), recorded with their adapters before they were
measured: other mail clients' own words in every language they ship, built as the nineteenth split's are. Each
plain-text reply a person writes with SOGo's webmail (Alinto/sogo) is built as its ``SOGoMailObject+Draft.m``
builds it: the language's own reply template (``SoObjects/Mailer/SOGoMail<Language>Reply.wo``) filled as
WebObjects fills it, with the standard attribution ("On <date>, <from> wrote:" in the language) or the
Outlook-style block ("-------- Original Message --------", Subject, Date, From, To in the language) over the
"> " quote, the reply below it (the default) and above it, the date as its default long date and time formats
write it with the language's ``Locale`` names of days and months: 47 languages (English among them), 188
bodies built, 178 once a body another language gives already is left out. Each plain-text reply a person
writes with Horde IMP (horde/imp) is built as its ``IMP_Compose::replyMessageText`` builds it, in each
language of its ``locale`` catalogues: the default attribution ("Quoting %f:" as the language translates it)
or, with its "brief summary of the original message's header" option, the "----- Message from <sender>
---------" block (Date, From, Subject, To in the language, the Date header as it is) and its "----- End
message from …" line, over the "> " quote, the caret at the top (its default) or the bottom: 45 languages
(English among them), 180 bodies built, 154 kept. Each plain-text reply a person writes with Cypht
(cypht-org/cypht) is built as its ``format_reply_fields`` builds it in each interface language: the lead-in
("On %s %s said" as the language translates it, the Date header as it is, the sender's name and bare address)
over the "> " quote, the person's text at the top where its compose page puts the caret: 18 languages (English
among them), one body each, 17 kept. The reply and the message answered are k9-locales' and the same in every
language. No round read these projects' translations or composition code. What was looked at and not kept, and
why, is in the messages of the commits that recorded them. Measured once at the reader of 3956a36 (the shipped
one), before any body's output was read: sogo-locales 132/176, imp-locales 105/154, cypht-locales 5/17; held
out 242/347 (70 %), history as new 0, words dropped 0, 89 behind the unsure marker (as HTML the same). Its
misses were read then (stop 58) and tuned on: a dated attribution naming an address with a blank line before
the quote and no colon (Cypht), "Quoting %f:" as Horde IMP's translators write it; 258/347, history as new 0.
Left: the answer under the quote when SOGo's or IMP's reply header block stands over it (behind the marker: a
Freegle notification puts older unquoted text under the same shape). Tuning since.

Twenty-first split (machine): recorded with their rows in scripts/measure_machine_mail.py before they are
measured, four projects no round had read, each set's messages classed machine, person, list or other from the
project's own tests, fixture names and headers (never by the screening): CiviCRM, the CRM whose mailings take
bounces and whose inbound mail becomes activities (its ``tests/phpunit/CRM/Utils/Mail/data``: the DSNs and
vacation reply its EmailProcessorTest records as bounces, the mail its EmailProcessorInboundTest files as
activities from their senders; read from mattwire/civicrm-core's snapshot, which holds upstream's commit,
civicrm-core's own being over the size a snapshot may have), Lamson, Zed Shaw's Python mail server (its test
messages: the bounce its bounce_tests.py detects, a Lua list post), Mail::Box, Mark Overmeer's Perl mail
folders (its tests' ``t/folders/mbox.src``: a real mailbox of 1999 and 2000, ImageMagick list posts, people's
direct mail, Majordomo's and a bug tracker's automatic replies, split into its messages) and
Mail::ListDetector, a Perl module naming the mailing list a message came through (as gitpan/Mail-ListDetector
holds its last CPAN release: the message of each of its tests, Mailman, Majordomo, ezmlm, SmartList, Sympa,
Listar, Yahoo Groups, LISTSERV, Lyris, CommuniGate and Google Groups posts, and the "regular mail" its test
says is no list's, a warning from root). 100 files: 9 machine, 25 people's, 58 list posts, 8 other (templates,
a MIME library's sample, an S/MIME test message, copies within a set, spam). None was found in a set already
read (Message-ID). What was looked at and not kept, and why, is in the message of the commit that recorded
them. Measured once at the screening of e32f6b8 (the shipped one), before any verdict was read: machine
answered 3/9 (civicrm 0/4, lamson 0/1, mail-box 2/3, mail-listdetector 1/1), people refused 5/25 (civicrm 4/4,
none handed to a person; mail-box 1/21, handed to a person); list posts answered 3/58.

Twenty-first split, text (bigbang, ponymail), recorded with their adapters before they were measured: real
mail of public lists that two projects keep in their tests, read as the thread corpora are (no whole text is
stated: the history is what the thread's earlier messages hold, found through ``In-Reply-To`` and
``References``; history as new and words dropped are measured, not exact). BigBang, a toolkit for studying
mailing lists (datactive/bigbang): the two months of 3GPP working groups' lists its tests hold as mboxes (RAN
WG4 NR MIMO OTA, SA WG4 EVS: engineers of Ericsson, Nokia, Qualcomm, Keysight, vivo … writing from Outlook,
which top-posts over an unquoted "From: … Sent: …" block, in English, some with Swedish header words), the
Numpy-discussion list's November 2001 as Pipermail archives it, and its own list's six messages: 162 bodies
(46, 43, 67, 6), 73 of them with history the thread holds. Apache Pony Mail Foal, the ASF's list archive
(apache/incubator-ponymail-foal): the Apache lists' mail of its tests (the users@ and dev@ponymail months, an
ActiveMQ notice; its Jetspeed, Kafka and second ActiveMQ messages answer messages it lacks): 12 bodies, 7 with
history. Such a corpus is a month or a sample of a list, not whole threads, and Outlook quotes a message
unquoted and rejoined, so ``_sampled_thread_cases`` reads it with four differences from ``thread_cases`` (its
docstring): a message held twice is read once; only the messages whose history the corpus can show are cases
(one whose parent it holds, or one that answers nothing); a line the earlier messages' text holds run together
is history too, and a signature is what a sender repeats above the quoted part only; under the first header
block nothing is expected kept. The checks read the messages' headers and the thread, never the reader. What
was looked at and not kept, and why, is in the message of the commit that recorded them. Measured once at the
reader of 843a5ca (the shipped one), before any body's output was read: 172 bodies (bigbang 160, ponymail 12),
history as new 4 (bigbang 4, ponymail 0), words dropped 6 (as HTML 7), 3 behind the unsure marker. Its misses
were read then (stop 59) and tuned on: LISTSERV's footer, a bare lead-in's name in double quotes; history as
new 3 (lines the sender repeated identically from the quote). The machine part's: Majordomo@ and LISTSERV@ as
a machine's local part, X-ListServer as a list header; machine answered 1/9. Both tuning since; no set is held
out until the next is recorded.

Twenty-second split (machine): recorded with their rows in scripts/measure_machine_mail.py before they are
measured, six projects no round had read, each set's messages classed machine, person, list or other from the
project's own tests, fixture names and headers (never by the screening): Modoboa, the mail-hosting panel,
whose DMARC module imports the aggregate reports its tests hold (modoboa/modoboa: Amazon SES's, FastMail's,
Google's, Microsoft's, Yahoo's and 163.com's reports; four are another report of the set again, edited for the
importer's tests), Apache James, the Java mail server (apache/james-project: the test messages of its mailbox
store, its search index, its JMAP integration tests, its mailets and its container: JIRA's notifications
through its lists, an amavisd-new notice, an OpenPaaS calendar notice and an MDN; its developers' messages
written in Thunderbird, Roundcube, Twake Mail and Apple Mail, an Enron employee's forward; list posts; MIME,
attachment, charset and S/MIME test messages), node-baunsu, a Node bounce detector (ardiesaeidi/node-baunsu:
the bounces its hardBounceTest.js asserts bounced, the EarthLink challenge its autoResponseTest.js reads, a
GitHub notification its ordinaryEmailTest.js says is no bounce), gmail3, a Gmail script telling robots' mail
from people's (lollipopman/gmail3: the fixtures its test says a robot sent: cron, RapidSSL, StatusPage,
PagerDuty and Prolexic notices; Merriam-Webster's newsletter, which it says no robot sent), EspoCRM, the CRM
whose mail account recognises bounces (espocrm/espocrm: the messages of its BouncedRecognizerTest; its first
bounce is OTOBO's BounceEmail.t's again) and Webklex/php-imap, a PHP IMAP library (its parser fixtures: an
Exim DSN, a DMARC report, a GitHub notification, people's Outlook and Roundcube messages among test messages
whose class no test states). 176 files: 39 machine, 19 people's, 3 list posts, 115 other (copies within a set
by Message-ID, one copy of a set already read, test messages whose class no test states, newsletters, spam).
What was looked at and not kept, and why, is in the message of the commit that recorded them. Measured once at
the screening of 843a5ca (the shipped one), before any verdict was read: machine answered 4/39 (modoboa 0/6,
james 1/7, baunsu 0/14, gmail3 2/7, espocrm 1/2, webklex 0/3), people refused 0/19. Its misses were read then
(stop 59): an OpenPaaS calendar notice from a person's address, two of Prolexic's maintenance notices (PHP's
X-PHP-Originating-Script and a system account's Return-Path, which a contact form relaying a customer's words
carries too) and EspoCRM's RFC 3464 example with broken header lines; no rule written. Tuning since.

Twenty-second split (balsa-locales, nocc-locales, squirrelmail-locales), recorded with their adapters before
they are measured: other mail clients' own words in every language they ship, built as the nineteenth and
twentieth splits' are. Each plain-text reply a person writes with Balsa (GNOME/balsa, a GTK mail client) is
built as its ``sendmsg-window.c`` builds it: the attribution ``_("On %s, %s wrote:\\n")`` as each ``po`` file
translates it, the date in its default ``DateFormat`` "%x %X" as the C library writes it in the language's
glibc locale (compiled here by ``localedef`` from glibc's sources), the sender's name, each line of the
message behind its default "> " (the empty line after the text's last line break too) and one more line break,
the person's text where it puts the cursor, at the top: 61 languages (English among them), 60 bodies built
(Interlingue has no glibc locale), 57 kept. Each plain-text reply a person writes with NOCC
(jespersgaard/NOCC, a PHP webmail translated at translatewiki.net) is built as its ``action.php`` and
``mailquote`` build it, in each language its ``config/conf_lang.php`` offers: the default "<From> wrote :"
(``$html_wrote`` in the language) over the "> " quote, and its Outlook-style block ("-- Original Message --",
From, To, Sent, Subject in the language, the Sent date ``strftime`` of the language's formats in its
``$lang_locale``, or its no-locale format where glibc has no such locale) over the message unquoted, the
person's text above and below (it puts no caret in the body): 64 languages (English among them), 256 bodies
built, 232 kept. Each plain-text reply a person writes with SquirrelMail (1.5.2's Subversion tree and its
translations, as sitle/squirrelmail-src mirrors them) is built as its ``compose.php`` builds it: each line
behind its default ">" and a space, the whole rewrapped by its ``sqBodyWrap`` at 76 columns, under its default
"date_time_author" citation ("On %s, %s wrote:" in the language, the date ``date_intl`` of the translated "D,
F j, Y g:i a" with the language's day and month names), the person's text above and below (its default caret
is in the To field): 57 languages (English among them), 114 bodies built, 110 kept. The reply and the message
answered are k9-locales' and the same in every language. No round read these projects' translations or
composition code. What was looked at and not kept, and why, is in the message of the commit that recorded
them. Measured once at the reader of 1360a29 (the shipped one), before any body's output was read:
balsa-locales 57/57, nocc-locales 116/230 (history as new 8, as HTML 6; words dropped 28; 50 behind the unsure
marker), squirrelmail-locales 110/110; held out 283/397 (71 %), history as new 8, words dropped 28. Its misses
were read then (stop 59) and tuned on (8c7ec13): a title between dashes, one dash or more each side, over a
sender's field in any language is an older message's start; nocc-locales 144/230, history as new 0, words
dropped 0 (the split 311/397). Tuning since; no set is held out until the next is recorded.

Twenty-third split (trojita-locales), recorded with its adapter before it is measured: another mail client's
own words in every language it ships, built as the nineteenth, twentieth and twenty-second splits' are. Each
plain-text reply a person writes with Trojitá (jktjkt/trojita, a Qt IMAP client; its translations are KDE's,
``po/<language>/trojita_common.po``) is built as its ``MessageView::quoteText`` builds it: the attribution
``tr("On %1, %2 wrote:\\n")`` as each language translates it, the answered message's date as Qt 5's
``QLocale::toString(…, QLocale::LongFormat)`` writes it in the language (Debian's PyQt5, Qt 5.15, the Qt it
builds with), the sender's name, then ``Composer::quoteText``'s "> " before each line (">" before an empty
one) and one empty line more; the editor gets that as its whole text with no caret in the body, so the
person's text is built at the top and at the bottom, and the text is sent through its ``wrapFormatFlowed`` (a
line over 75 characters cut after a space: five languages' attributions), lines CRLF: 42 languages (English
among them; the nine with no translation of it, ia, ja, ka, lt, mr, nds, ro, ug and zh_CN, give English words
around their own date), 84 bodies, none another language gives already. The reply and the message answered are
k9-locales' and the same in every language. No round read Trojitá's translations or composition code. What was
looked at and not kept, and why, is in the message of the commit that recorded it. Measured once at the reader
of cb7a4ca (the shipped one), before any body's output was read: trojita-locales 82/84 (98 %), history as new
0, words dropped 0, none behind the unsure marker (as HTML the same). Its two misses were read then (stop 59):
attributions Trojitá's wrapping split over two lines; nothing changed. Tuning since; no set is held out until
the next is recorded.

Twenty-third split (machine): recorded with their rows in scripts/measure_machine_mail.py before they are
measured, three projects no round had read, each set's messages classed machine, person, list or other from
the project's own tests, fixture names and headers (never by the screening): Dada Mail, the Perl mailing-list
manager whose bounce handler scores its subscribers' bounces (justingit/dada-mail: the messages of its
``app/dada/t/corpus/email_messages``, the Postfix, Exim, qmail, Amazon SES, GoDaddy and Yahoo bounces and the
Amazon SES complaint its DADA_App_BounceHandler_MessageParser.t finds a bouncing address and a rule in, a
Hotmail complaint notice, the list owner's own Apple Mail messages its bridge plugin's test sends through the
list, and its templates), AbuseIO, the abuse-report handler of ISPs and hosters (AbuseIO/AbuseIO: the samples
of ``extra/notifier-samples``, one or more for each notifier its parsers read, feedback-loop ARF reports of
AOL, Comcast, Cox, Yahoo, Zoho and others, SpamExperts' ARF reports, Shadowserver's scan reports,
blocklist.de's, Clean-MX's, C-SIRT's, Netcraft's, IP-Echelon's, Google Safe Browsing's, Project Honey Pot's,
AbuseHUB's, Copyright Compliance's and WebIron's notices) and Patchwork, the patch tracker of the Linux
kernel's and many projects' lists (getpatchwork/patchwork: the messages its parser tests read from
``patchwork/tests/data/mail`` and its series tests from ``patchwork/tests/data/series``, developers' patches,
pull requests and replies, through a list or to people, sent with git send-email, Mercurial's patchbomb,
Evolution, Thunderbird or by hand). 251 files: 95 machine (Dada Mail's 19, AbuseIO's 76), 36 people's (Dada
Mail's 2, Patchwork's 34), 27 list posts (Patchwork's), 93 other (copies within a set by Message-ID, 80 of
them; templates, header fragments, test output). None was found in a set already read (Message-ID). What was
looked at and not kept, and why, is in the message of the commit that recorded them. Measured once at the
screening of 843a5ca (the shipped one), before any verdict was read: machine answered 18/95 (dada-mail 0/19,
abuseio 18/76), people refused 0/36 (dada-mail 0/2, patchwork 0/34); list posts answered 1/27. Its misses were
read then (stop 59): all 18 are AbuseIO's abuse reports with no sign a person's mail lacks; no rule written.
Tuning since.

Twenty-fourth split (text; grommunio-locales), recorded with its adapter before it is measured: a webmail
client's own words in every language it ships, built as the nineteenth to twenty-third splits' are. Each
plain-text reply a person writes with grommunio-web (grommunio/grommunio-web, the groupware's webmail, a fork
of Kopano WebApp; translations in ``server/language/<language>.UTF-8/LC_MESSAGES/grommunio_web.po``), with the
plain-text editor chosen (the default editor is HTML, sent as HTML alone: not built), is built as its
``MailContextModel.initRecordBody`` builds it from ``Templates.plaintextQuotedTemplate``: two line breaks, an
Outlook-style block, "--------------------" and the translated "Original message" between twenty dashes each
side, then "> " before the translated From, Sent, To and Subject labels and their values (the date by the
translated Ext JS format "l jS F Y {0}" with the default time format "G:i", the translated day and month names
and Ext's English "S" suffix), "> " alone, and the answered text with "> " before each line (a line over 72
characters cut at a space); the browser's ``_()`` HTML-encodes every translation. The caret is put at the
start, so the person's text is at the top (the client offers no other place); lines CRLF: the 94 languages of
``ENABLED_LANGUAGES`` (English among them, en_US and en_GB, each with its own date format), 94 bodies built,
34 kept: the 60 languages that translate none of these words (16 ship no ``.po`` at all) give the same English
body, the first of them (af_ZA) kept, and de_DE gives de_CH's. The reply and the message answered are
k9-locales' and the same in every language. No round read grommunio-web's or Kopano WebApp's translations or
composition code. What was looked at and not kept, and why, is in the message of the commit that recorded it.
Measured once at the reader of c433f7c (the shipped one), before any body's output was read: 34/34 exact
(100 %), history as new 0, words dropped 0, none behind the marker (as HTML the same).

Twenty-fourth split (text, second part: jwzthreading, mail-thread), recorded with their adapters before they
are measured: real mail of public lists that two more projects keep in their tests, read as the twenty-first
split's bigbang and ponymail are (``_sampled_thread_cases``: no whole text is stated, the history is what the
thread's earlier messages hold, found through ``In-Reply-To`` and ``References``; history as new and words
dropped are measured, not exact). Both are implementations of Jamie Zawinski's threading algorithm that test
it on real lists' mailboxes. jwzthreading (rth/jwzthreading, the Python implementation FreeDiscovery forked
from A. M. Kuchling's): fedora-devel-list's January 2010 as Red Hat's list archive gives it for download (1 to
9 January, the messages' headers whole), 292 messages from 124 senders, Mutt, Thunderbird, KMail, Alpine,
Gnus, KNode, Pan … (nine of its first messages are the daily "rawhide report" a robot posts): 277 cases, 211
of them with history the thread holds, 3389 kept lines. mail-thread (Mail::Thread, Simon Cozens's Perl
implementation, 2.55 as gitpan/Mail-Thread holds it): the nine mailboxes its tests thread, 43 messages of
2000 to 2003 from a Yahoo group, rt-users, Belfast.pm and London.pm, perl.org's fwp and bootstrap lists, the
Aegis users' list and the Austin Group's (in ``t/testbox-5`` the test's author rewrote the four messages'
identifiers and subjects, the order of the replies kept): 32 cases, 26 with history, 184 kept lines. The
messages a case leaves out are replies whose parent the corpus lacks (13 and 8), messages with no parent
header whose subject answers another (1 and 3) and a body held twice (1, jwzthreading). No Message-ID of
theirs is in a set already read. The checks read the messages' headers and the thread, never the reader.
What was looked at and not kept, and why, is in the message of the commit that recorded them. Measured once
at the reader of c433f7c (the shipped one), before any body's output was read: history as new 4 of 309
bodies (jwzthreading 2 of 277, mail-thread 2 of 32), words dropped 2 (mail-thread), 6 behind the marker (as
HTML the same).

Twenty-fourth split (machine): recorded with their rows in scripts/measure_machine_mail.py before they are
measured, three projects no round had read, each set's messages classed machine, person, list or other from
the project's own tests, fixture names and headers (never by the screening): MediaWiki's BounceHandler, the
extension that unsubscribes a wiki's users whose mail bounces (wikimedia/mediawiki-extensions-BounceHandler:
the messages of its ``tests/phpunit/bounce_emails``, Exim's bounces, Hotmail's DSN and a delay notice its
ApiBounceHandlerTest and ProcessBounceWithRegexTest read), HyperKitty, Mailman 3's list archiver (its GitHub
repository hyperkitty/hyperkitty, whose last commit is of 2015: the messages of ``hyperkitty/tests/testdata``,
posts through Fedora's, EELV's and a Mailman test list its scrubber and incoming tests archive, Pipermail
extracts and a dummy test message) and Firefox Relay, Mozilla's forwarder of mail sent to masked addresses
(mozilla/fx-private-relay: the raw incoming messages of ``emails/tests/fixtures``, ``*_incoming.email``, its
views tests forward to the mask's owner or refuse). 28 files: 5 machine (BounceHandler's 4, Relay's 1), 3
people's (Relay's), 6 list posts (HyperKitty's), 14 other (copies within a set by Message-ID, 7 of them; a
template, Pipermail extracts, test messages, spam). None was found in a set already read (Message-ID). What
was looked at and not kept, and why, is in the message of the commit that recorded them. Measured once at the
screening of c433f7c (the shipped one), before any verdict was read: machine answered 0/5 (mw-bouncehandler
0/4, private-relay 0/1; that one handed to a person), people refused 0/3 (private-relay); list posts
answered 0/6 (hyperkitty). Its misses, text and machine, were read then (stop 60): the lists' history as
new was the checker's (a clear-signed message's armor) or a quote written with "|" (106ea2c), the machine
part had none; tuning since, and no set is held out until the next is recorded.

Twenty-fifth split (text; rainloop-locales), recorded with its adapter before it is measured: a webmail
client's own words in every language it ships, built as the nineteenth to twenty-fourth splits' are. Each
plain-text reply a person writes with RainLoop (RainLoop/rainloop-webmail, the webmail SnappyMail forked;
translations in ``rainloop/v/0.0.0/app/localization/webmail/<language>.yml``) to a plain-text message (its
editor then switches to plain text) is built as its ``ComposePopupView.initOnShow`` builds it: two line
breaks, the translated ``COMPOSE/REPLY_MESSAGE_TITLE`` ("%DATETIME%, %EMAIL% wrote", with the date by moment
2.29.1's "LLL" in the moment locale RainLoop's server loads for the language, and the sender as '"Name"
<address>'), ":", two line breaks and the answered text in a blockquote, all made plain text by the plain
editor's ``htmlToPlain`` ("> " before each line), then two line breaks the signature command adds with no
signature. The caret is put at the start, so the person's text is at the top (the client offers no other
place); lines CRLF: 38 languages (English among them, en_US and en_GB), 38 bodies built, 35 kept (ca_ES
gives ca's, en_US en_GB's, pt_PT pt_BR's). The reply and the message answered are k9-locales' and the same in
every language. No round read RainLoop's or SnappyMail's translations or composition code. What was looked
at and not kept, and why, is in the message of the commit that recorded it.
Measured once at the reader of 106ea2c (the shipped one), before any body's output was read: 35/35 exact
(100 %), history as new 0, words dropped 0, none behind the marker (as HTML the same). Nothing to read;
tuning since.

Twenty-fifth split (people's mail): recorded with their rows in scripts/measure_machine_mail.py before they
are measured, three mail clients' test mail no round had read, so that "no person refused" is judged on more
than a handful of messages; each set's messages classed person, list, machine or other from the project's own
tests, fixture names and headers (never by the screening): KDE's mimetreeparser, the MIME tree parser of
KMail and KDE's mail apps (KDE/mimetreeparser: the messages of ``autotests/testdata``, one ``.mbox`` a
message, most imported from kdepim (its README): what KDE's developers wrote in KMail 4.6 to 5.0,
Thunderbird, Icedove, Apple Mail, Outlook for Mac, Alpine and Roundcube, signed or encrypted with OpenPGP or
S/MIME to the tests' keys, received through Kolab Now, posts through kde-pim and plasma-devel, a Bugzilla
notice, spam, a newsletter, invitations), Sup, the Ruby console mail client (sup-heliotrope/sup: the messages
of ``test/fixtures`` its test_message.rb reads, replies written in Sup and Zimbra, list posts, encoding
tests) and Astroid, the notmuch-based GTK mail client (astroidmail/astroid: ``tests/mail/test_mail`` and
``tests/mail/test_out_of_sync.eml``, a Mutt forward, sup-talk posts, a debian-user digest, a GitHub
notification, test messages). 118 files: 36 people's (mimetreeparser's 32, Sup's 3, Astroid's 1), 8 list
posts (3, 2, 3), 2 machine (mimetreeparser's, Astroid's), 72 other (copies within a set, 28 of them; test
messages, cut or anonymised headers, spam, newsletters, invitations). None was found in a set already read
(Message-ID). What was looked at and not kept, and why, is in the message of the commit that recorded them.
Measured once at the screening of 106ea2c (the shipped one), before any verdict was read: people refused
0/36 (mimetreeparser 0/32, sup 0/3, astroid 0/1), machine answered 0/2, list posts answered 0/8.

Twenty-fifth split (machine): recorded with their rows in scripts/measure_machine_mail.py before they are
measured, three projects no round had read, each set's messages classed machine, person, list or other from
the project's own tests, fixture names and headers (never by the screening): Mail and Packages, the Home
Assistant integration that counts a household's parcels from its mailbox
(moralmunky/Home-Assistant-Mail-And-Packages: the messages of its ``tests/test_emails``, Amazon's, UPS's,
FedEx's, USPS's, DHL's, Royal Mail's, Hermes's, Australia Post's, GLS's, DPD's and InPost's delivery notices
and USPS's Informed Delivery digests its conftest serves from a mock mailbox and test_helpers counts),
Combodo's mail-to-ticket extension of iTop (Combodo/combodo-email-synchro: the messages of
``tests/php-unit-tests/resources/email-samples``, the mail of Combodo's and its customers' ticket mailboxes
its HTMLDOMSanitizerTest, ValidateEmlFilesTest and RawEmailMessageTest read: customers' and prospects'
questions, developers' test messages, web form relays, newsletters, iTop's and another helpdesk's
notifications, cron and remittance mail, vacation replies) and SimpleLogin, Proton's email alias forwarder
(simple-login/app: the messages of ``tests/example_emls`` and ``local_data/email_tests``, Postfix's bounce its
email utilities read and templates its handler tests fill in). 219 files: 40 machine (Mail and Packages' 31,
Combodo's 8, SimpleLogin's 1), 81 people's (Mail and Packages' 1, Combodo's 80), no list post, 98 other (form
relays, newsletters and offers, templates, test messages and test variants, extracts, a copy by Message-ID).
None was found in a set already read (Message-ID). What was looked at and not kept, and why, is in the message
of the commit that recorded them. Measured once at the screening of 106ea2c (the shipped one), before any
verdict was read: machine answered 30/40 (mail-and-packages 22/31, combodo-email-synchro 8/8, simplelogin
0/1), people refused 0/81 (combodo-email-synchro 0/80, mail-and-packages 0/1); none handed to a person. Its
misses were read then (stop 60): Amazon's notices say Reply-To no-reply@, USPS's come from auto-reply@ (the
rule of 3e6dce9: 17/42 answered after); the rest carry no sign a person's mail lacks (FedEx's, UPS's, USPS
Informed Delivery's and DPD's notices from their own addresses, iTop's ticket notices, a cron-apt report
from root@, two remittance advices, three vacation replies whose only mark is OVH's "Delivered-To:
Autoresponder"). Tuning since, with the people's part; no set is held out until the next is recorded.

Twenty-sixth split (text; meli, emailthreads), recorded with their adapters before they are measured: real
mail people wrote to public lists, whole threads that two more projects keep in their tests, read as the
twenty-first and twenty-fourth splits' corpora are (``_sampled_thread_cases``: no whole text is stated, the
history is what the thread's earlier messages hold, found through ``In-Reply-To`` and ``References``; history
as new and words dropped are measured, not exact). Unlike those samples of a month or a list, here every
reply's parent is in the corpus. meli (meli/meli, the terminal mail client in Rust): the two mailboxes its
mbox parser's test reads, two whole threads of the Git list as its archive exports them, "[PATCH] Put sha1dc
on a diet" (March 2017, 36 messages: Linus Torvalds's patch and the answers of Junio C Hamano in Gnus, Jeff
King, Johannes Schindelin in Alpine, Duy Nguyen, Jeff Hostetler and Marc Stevens in Thunderbird and Zimbra,
Dan Shumow in Outlook, top-posted) and "'git am' breakage with MIME decoding" (July 2008, 7 messages): 43
cases (two first posts the test also holds alone are read once), 37 with history the thread holds, 406 kept
lines, 254 history lines. emailthreads (emersion/python-emailthreads, the library that builds sourcehut's
lists' thread trees): the messages its parse test reads, a wayland-devel review thread of May 2018 (a
protocol patch, Pekka Paalanen's inline review, its author's answer, the review's answer to that) and a
todo.sr.ht patch of June 2018 with Drew DeVault's inline review (the addresses changed to example.com): 5
cases, 4 with history, 290 kept lines, 386 history lines (the review thread's patch answers a first version
the corpus lacks: read as an earlier message only). No Message-ID of theirs is in a set already read.
The checks read the messages' headers and the thread, never the reader. What was looked at and not kept, and
why, is in the message of the commit that recorded them. Measured once at the reader of 7715456 (the shipped
one), before any miss was read: history as new 1 (emailthreads 1, meli 0), words dropped 1 (emailthreads 1,
meli 0), behind the unsure marker 1 (meli), of 48 bodies (as HTML: history as new 1, words dropped 0).
The history-as-new body is the checker's (a reviewer's retyped line of the patch); tuning since.

Twenty-sixth split (machine): recorded with their rows in scripts/measure_machine_mail.py before they are
measured, two projects no round had read, each set's messages classed machine, person, list or other from the
project's own tests, fixture names and headers (never by the screening), for the machine mail that carries no
standard sign: Tine 2.0, Metaways' groupware (tine20/tine20: the messages of
``tests/tine20/Felamimail/files`` its Felamimail and iMIP tests read: Request Tracker's ticket notice, a git
push notice, Facebook's, Meetup's, Statuspage's, Google Shopping's, a job board's and a gateway's notices,
Tine's own alarm, invitation and cancellation notices and iMIP replies, beside people's messages, gentoo-dev
posts, newsletters, offers, spam, calendar invitations and test messages) and blaze, an OCaml mail toolkit
(dinosaure/blaze: ``test/*.mail`` and ``test/mdir``, the messages its DKIM, DMARC, ARC and maildir tests read:
GitHub's and Discourse's notifications, a person's message, linux-kernel posts, a newsletter). 80 files: 16
machine (Tine's 13, blaze's 3), 11 people's (Tine's 10, blaze's 1), 5 list posts, 48 other (newsletters,
offers and spam, calendar invitations, test messages, 15 copies or edited variants, one of them RFC 6376's
example message found in sets already read). What was looked at and not kept, and why, is in the message of
the commit that recorded them. Measured once at the screening of 7715456 (the shipped one), before any
verdict was read: machine answered 6/16 (tine20 6/13, blaze 0/3; 4 of tine20's refused ones handed to a
person), people refused 0/11 (tine20 0/10, blaze 0/1), list posts answered 0/5. Its misses were read
afterwards (docs/reliability.md); nothing was changed for them. Tuning since, with the text part; no set is
held out until the next is recorded.

Twenty-seventh split (text; bodyparts, planer), recorded with their adapters before they are measured: replies
people write, read from two more projects whose tests state what the new text is, not thread corpora.
BodyParts (max-mapper/bodyparts, Max Ogden's Ruby gem of 2010 that splits a reply into its new message and the
reply chain): the messages of ``spec/emails.yml`` and the two ``spec/*.eml`` files its spec hands
``BodyParts.find_reply_in``, each with the ``:new_message`` it expects (top-posted replies as Gmail, Yahoo!
Mail, Hotmail, AOL Webmail and a generic client ("----- Original Message -----") quote, a reply over two older
messages, a message answering nothing, text sent base64 and quoted-printable, a Gmail message with an
attachment), and the README's Gmail example with the new message it says the gem gives: 12 bodies, the whole
new text stated for each; the gem's "rest of the thread" (from the first delimiter on) is history. planer
(lever/planer, Lever's CoffeeScript port of talon): the three HTML mails of ``test/examples/html`` its tests
hand ``extractFromHtml`` (Outlook with Office namespaces over a Gmail message; an Office 365 thread; an
Outlook for Android thread forwarded with the forwarder's line), each with a phrase of the new text the output
must hold and a phrase of an older message it must not (no whole text stated). No body of theirs is in a set
already read. The checks read the sources' statements, never the reader. What was looked at and not kept, and
why, is in the message of the commit that recorded them. Measured once at the reader of 288e08c (the shipped
one), before any miss was read: bodyparts 11/12 exact (92 %), history as new 0, words dropped 0, 1 behind the
unsure marker; planer history as new 0, words dropped 0, 1 behind the marker (3 bodies, no exact figure); the
same as HTML. Its one miss was read afterwards (docs/reliability.md); nothing was changed. Tuning since.

Twenty-seventh split (machine): recorded with its rows in scripts/measure_machine_mail.py before it is
measured, one project no round had read, its messages classed machine, person, list or other from the
project's own statement (never by the screening), sought for the transactional mail that carries no standard
sign: email_classifier (renat-ibragimov/email_classifier), an API that files an uploaded .eml under spam,
phishing, newsletter, transactional, personal or automated; its README names the category of each sample in
``tests/fixtures``. 11 files: 2 machine (a shop's shipping notice with no standard sign, GitLab CI's pipeline
notice with Auto-Submitted), 1 person's, no list post, 8 other (a newsletter, spam and phishing samples, three
edge cases the API refuses). All are written for the project (example.com addresses), not received mail; none
was found in a set already read (Message-ID). Fewer than the brief asked: the projects looked at and not kept,
and why, are in the message of the commit that recorded it. Measured once at the screening of 288e08c (the
shipped one), before any verdict was read: machine answered 0/2, people refused 0/1. Tuning since, with the
text part; no set is held out until the next is recorded.
"""

from typing import NamedTuple


class Source(NamedTuple):
    repository: str
    commit: str
    split: str  # "tuning" or "held-out"
    measures: str  # "machine" (scripts/measure_machine_mail.py) or "text" (scripts/measure_new_text.py)


SOURCES: dict[str, Source] = {
    # Tuning: the sets mail-facts.md names (the rules before #41 were fitted to them) and one more.
    "sisimai": Source(
        "sisimai/set-of-emails", "18e585c22288b83c1f6943949cb86b2623b362ce", "tuning", "machine"
    ),
    "flanker": Source("mailgun/flanker", "c7f70738dbb39eda2861b03917b63ec9fa828f5d", "tuning", "machine"),
    "mikel-mail": Source("mikel/mail", "d645d7b5b7d03218b0bc8971ef041c991a63f5f7", "tuning", "machine"),
    "zammad": Source("zammad/zammad", "(not re-measured: snapshot over 500 MiB)", "tuning", "machine"),
    "discourse": Source(
        "discourse/discourse", "(not re-measured: snapshot over 500 MiB)", "tuning", "machine"
    ),
    "php-bounce-handler": Source(
        "cfortune/PHP-Bounce-Handler", "956e65b0d502b1904546c3c46480409ded41d755", "tuning", "machine"
    ),
    "talon": Source("mailgun/talon", "71d9b6eb78e985bcdfbf99b69c20c001b4b818c4", "tuning", "text"),
    "erp": Source("github/email_reply_parser", "59e5859cfe826d3cb6069bbbfd8577230c93b3cf", "tuning", "text"),
    "trimmer": Source(
        "discourse/email_reply_trimmer", "117fd1a2703d110651d4faec09b12dc1fc22f237", "tuning", "text"
    ),
    # The first round's held-out sets, read while tuning: tuning now.
    "bounceparser": Source(
        "rjbs/Mail-DeliveryStatus-BounceParser",
        "3133a16326c596e0e9fc97469930aee535962bcf",
        "tuning",
        "machine",
    ),
    "bounce-email": Source(
        "mitio/bounce_email", "ae6618ebf001643dad177c3e2cdc319459f9cfdf", "tuning", "machine"
    ),
    "redmine": Source("redmine/redmine", "890812e49cc60e96c7c252b7dedbd881a4edba55", "tuning", "machine"),
    "crisp": Source(
        "crisp-oss/email-reply-parser", "0b3704c8744d6f57ae1d86d7eab75535c51d2f5c", "tuning", "text"
    ),
    "mpr": Source("alfonsrv/mail-parser-reply", "fc44bc880932f81f70a7deaf91c4525b3a6feddb", "tuning", "text"),
    # Held out (second round): fetched and recorded before any rule changed; run only to report. The
    # text sets of that round (edgetier, extended-erp, t2bot, huan086) had their misses read in the docs:
    # tuning since the fourth split. These three machine sets' misses were read in stop 57 (mail-mime-parser's
    # six people with no From): the screening's no_sender hand-off (stop 58) was written after, so they
    # are tuning since.
    "flufl-bounce": Source(
        "wRAR/flufl.bounce", "796a6b901710175ca367f79c0ac6d963201db91d", "tuning", "machine"
    ),
    "osandum": Source(
        "osandum/bounce-parser", "a1df46c615c98c46644e1c4569f2b106f853a1c6", "tuning", "machine"
    ),
    "mail-mime-parser": Source(
        "zbateson/mail-mime-parser", "3db681988a48fdffdba551dcc6b2f4c2da574540", "tuning", "machine"
    ),
    "edgetier": Source(
        "EdgeTier/email-reply-parser", "48783bf947dc97d9e7618fff902a0e6dfa405d01", "tuning", "text"
    ),
    "extended-erp": Source(
        "fiedl/extended_email_reply_parser", "86592733884c2b810f87701397032cd8be30d306", "tuning", "text"
    ),
    "t2bot": Source(
        "t2bot/node-email-reply-parser", "ffc9cb00cd118900a4bed6eaff13d2a034d6376e", "tuning", "text"
    ),
    # Third split: added after that round's rules were written and measured (only the bodies no other
    # set holds are measured); its misses were read too: tuning since the fourth split.
    "huan086": Source(
        "huan086/EmailReplyParser", "711229c290e66081523ee8a5a651b4e4f60a48a9", "tuning", "text"
    ),
    # The fourth split's held-out sets (measured with the reader of 8194fc4, then read for the notes in
    # docs/reliability.md): tuning since the fifth split.
    "hellogustav": Source(
        "hellogustav/elixir_email_reply_parser",
        "e0cad1831cfaf1eb8db41fd8965eea2dd6e03c7d",
        "tuning",
        "text",
    ),
    "web-ridge": Source(
        "web-ridge/email-reply-parser", "95e2a82fa6bde0e10708fd1596574afb6fa76ec1", "tuning", "text"
    ),
    "bluee": Source("bluee/EmailReplyParser", "927aa7a325191a4ef4050a00afa82de81f979645", "tuning", "text"),
    "flutter": Source(
        "krishnaSoni2113/flutter-email-reply-parser",
        "8b164bf8de6dbbeaeef7127ca19f3326365f48e9",
        "tuning",
        "text",
    ),
    # The fifth split's held-out sets (measured with the reader of 47b69ed and of 8fb4143, then read for
    # the notes in docs/reliability.md): tuning since the sixth split.
    "unquotemail": Source("Crsk/unquotemail", "986118da1cfaa2904884ee328c650fddf4a1eae4", "tuning", "text"),
    "mailspring": Source(
        "Foundry376/Mailspring", "d93a0d7f43049dd81e1ff0cdf9957915dd5d62b6", "tuning", "text"
    ),
    "gaia": Source(
        "mozilla-b2g/gaia-email-libs-and-more", "0c88d6236758409d950b1858c22a44ef28774b70", "tuning", "text"
    ),
    "griddler": Source("thoughtbot/griddler", "837a2e8dd8834fdf42e13fc42f0eefc8e239e32a", "tuning", "text"),
    # Fifth split, second part: recorded after that round's rules were final (0cd41aa) and before they were
    # measured, because the first part held 92 distinct bodies (under the hundred aimed for). Tuning since
    # the sixth split.
    "mab": Source(
        "markashleybell/MAB.EmailReplyParser", "0c1784b861ed894b970579df8f1bed9a54d80f07", "tuning", "text"
    ),
    "erichuang": Source(
        "EricJWHuang/EmailReplyParser", "92ba0b55711f6bc4a3ca9545f8a9f5ad46c7f319", "tuning", "text"
    ),
    "mail-extract": Source(
        "sosedoff/mail_extract", "c0c03a024b27cd3d7047cdf0f2cb27744e65f3cb", "tuning", "text"
    ),
    "mailstrip": Source("pgherveou/mailstrip", "68aeef2d0a08cb580c9c53775f01059007ad9b0e", "tuning", "text"),
    # The sixth split's held-out sets (measured with the reader of 8fb4143 and of 574d912, then read for
    # the notes in docs/reliability.md): tuning since the seventh split.
    "activecollab": Source(
        "activecollab/EmailReplyExtractor", "925514307b6d8acac7c9672cb2ec5fc0b82ecf63", "tuning", "text"
    ),
    "phabricator": Source(
        "phacility/phabricator", "5720a38cfe95b00ca4be5016dd0d2f3195f4fa04", "tuning", "text"
    ),
    "roundup": Source(
        "roundup-tracker/roundup", "3ed0c6de4294380b17aece8ee4152f2fc472d010", "tuning", "text"
    ),
    "quotequail-tests": Source(
        "closeio/quotequail", "6969bfffd53d72c30e90dddedf43e66f7fe3c2da", "tuning", "text"
    ),
    # The seventh split's held-out sets (measured with the reader of 574d912 and of 871d107, then read for
    # the notes in docs/reliability.md): tuning since the eighth split. Seven projects no round had read
    # were recorded here with their adapters before any rule of that round changed.
    "landwirtcom": Source(
        "Landwirtcom/emailreplyparser", "a8a8e017051d39e33528ce8d4fa2c0ad2b988b2b", "tuning", "text"
    ),
    "teamtailor": Source(
        "Teamtailor/email_reply_parser", "c93438ea706edb4c55c08ed290cc1f6f265a4eb5", "tuning", "text"
    ),
    "apptentive": Source(
        "apptentive-engineering/email_reply_parser",
        "eccab9466e16af5dc973d7d7b5803bd8c975f73b",
        "tuning",
        "text",
    ),
    "randock": Source(
        "randock/EmailReplyParser", "246c0feba5766ed42f742197107d7bfe838e8ba6", "tuning", "text"
    ),
    "dspangenberg": Source(
        "dspangenberg/email-reply-parser", "da7cd3ebc7c9ec4f29d19b2ed0d4aa18efb5b5a4", "tuning", "text"
    ),
    "team-plain": Source(
        "team-plain/node-email-reply-parser", "4e3447fc06f81a9645702fda29582f4304053dab", "tuning", "text"
    ),
    "parse-reply": Source(
        "Like-Falling-Leaves/parse-reply", "5b0ad7a8eedb636fcc6cee8f479301b094b3f5df", "tuning", "text"
    ),
    # Seventh split, second part: recorded after the first part was measured once (43 bodies, under the
    # hundred aimed for) and before any rule of that round changed.
    "rudirocks": Source(
        "rudirocks/email_reply_parser", "d89e514aa7f0cfe9a3d0c0b84301b973da079d97", "tuning", "text"
    ),
    "unloved": Source(
        "unloved/email_reply_parser", "51e86544788b005925e4806df85f960163d907d0", "tuning", "text"
    ),
    "vu0tran": Source(
        "vu0tran/emailreplyparser", "e7d5066e0a7e73179db083c6d4ffa77094b167a5", "tuning", "text"
    ),
    "jakul": Source("jakul/email-reply-parser", "37514af5daac54975b9fd5a7d950fe71c4dc9315", "tuning", "text"),
    "sculture": Source(
        "ScultureAI/email-reply-parser", "68bfad75438746a1fea2e6de5f3a302ac0c868a1", "tuning", "text"
    ),
    "fredrikankarang": Source(
        "FredrikAnkarang/EmailReplyParser", "864e2d43fd8484c4b53591ed18c659858f3534ab", "tuning", "text"
    ),
    # The eighth split's held-out sets (measured with the reader of 871d107 and of 4930f1e, then read for
    # the notes in docs/reliability.md): tuning since the ninth split. Projects no round had read, none of
    # them a reply parser's fork.
    "assembl": Source("assembl/assembl", "3b421649de1dfe772038d0751a75300079ceeb55", "tuning", "text"),
    "assembl-thread": Source("assembl/assembl", "3b421649de1dfe772038d0751a75300079ceeb55", "tuning", "text"),
    "kritikalfabric": Source(
        "KritikalFabric/corefabric.io", "5f87579a9cd77a688d2cf910be6b350a7f997b91", "tuning", "text"
    ),
    "notmuch": Source("notmuch/notmuch", "fdc9c75388b1ed12662e1cdb73b48b6d809ef5d8", "tuning", "text"),
    "notmuch-lkml": Source("notmuch/notmuch", "fdc9c75388b1ed12662e1cdb73b48b6d809ef5d8", "tuning", "text"),
    # Eighth split, second part: recorded after that round's rules were final (4930f1e) and before they were
    # measured, because the first part states a whole text for 19 bodies only.
    "mitija": Source("mitija/email_agent", "881cb5aa36b1f87fb5b0c407c51f3cf0e15ea9ac", "tuning", "text"),
    "mu": Source("djcb/mu", "1a99e705a3cc6303b84b47e30cd312d64d8639f6", "tuning", "text"),
    "mailpile": Source("mailpile/Mailpile", "741e610f3e765f03bd0c452c92c6758280e7f99f", "tuning", "text"),
    # The ninth split's held-out sets (measured with the reader of be3ed04 and of 5a26933, then read for the
    # notes in docs/reliability.md): tuning since the tenth split.
    "chatmail": Source("chatmail/core", "48888898ee148ed7b70fa825acffa6829c56c5cf", "tuning", "text"),
    "constable": Source("thoughtbot/constable", "d2d427497ba5fa225378d1c094e54848cf5e753b", "tuning", "text"),
    "mailstrip-go": Source(
        "kvannotten/mailstrip", "0002f5c0467eaa183dac821f9e583dda70dde87b", "tuning", "text"
    ),
    # Ninth split, second part: recorded after that round's rules were final (5a26933) and before they were
    # measured, because the first part states a whole text for 28 bodies only. Tuning since the tenth split.
    "jetbrains": Source(
        "JetBrains/email-parser", "8db0eae79465d3068081f5d1284b319ea7d65881", "tuning", "text"
    ),
    # The tenth split's held-out sets (measured with the reader of a593e06 and of 7e05419, then read for the
    # notes in docs/reliability.md): tuning since the eleventh split. gitea's commit f810e882 is upstream's
    # ("replace dimiro1/reply", #37858), read from creepervm1000/CreeperCoding's snapshot, which holds it
    # (gitea's own snapshot is 675 MB, over the 500 MiB a snapshot may have).
    "gitea": Source("go-gitea/gitea", "f810e882a441b7ee3780e003b16e6abe294bfa50", "tuning", "text"),
    "replyr": Source("wegatech/replyr", "2820657ba49d9a3c8bb2156b1ed9764ae6952bbc", "tuning", "text"),
    # Tenth split, second part: recorded after that round's rules were final (7e05419) and before they were
    # measured, because the first part states a whole text for 41 bodies only. Tuning since the eleventh.
    "recapco": Source(
        "recapco/emailreplyparser", "c8d8e0a5749b6e37ea2c6a8d0817cbeb3c43dd7d", "tuning", "text"
    ),
    "thunderbird": Source(
        "thunderbird/thunderbird-android", "a59bd679859d369c9a39be147e536b825ffd0a6b", "tuning", "text"
    ),
    # Tenth split, machine mail: recorded after the text sets were measured and before it was measured (the
    # screening did not change that round). Tuning since the eleventh split.
    "mailbouncedetector": Source(
        "rgl/MailBounceDetector", "05719306a7b903c07294d89386f84caa2912cd38", "tuning", "machine"
    ),
    # The eleventh split (tuning since the twelfth, its misses read): recorded with their adapters before
    # any rule of that round changed; measured once with the reader and the screening as they were before
    # tuning. Zimbra's commit is its snapshot's
    # newest. chatwoot's commit 02ab8565 is upstream's (the last to touch its mail fixtures and mailbox specs,
    # "include headers from incoming emails", #13139), read from md-riaz/chatwoot's snapshot, which holds it
    # (chatwoot's own snapshot is 1 GB, over the 500 MiB a snapshot may have).
    "zimbra": Source("Zimbra/zm-web-client", "518cc8b4d25c0e5d2efc57e31d366400fa05d943", "tuning", "text"),
    "chatwoot": Source("chatwoot/chatwoot", "02ab856520e7246cbfbaede557601e0adb3e64a3", "tuning", "machine"),
    # Fourteenth split, machine mail (held out): seven projects no round had read, each set's files classed
    # machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), recorded here with their rows in scripts/measure_machine_mail.py before they were measured.
    # Files that copy a set already in SOURCES are not scored (emailengine's autoreply and complaints
    # fixtures are sisimai's set-of-emails; RFC examples that flanker or PHP-Bounce-Handler hold are "other").
    # Measured once, at 72c982f (the screening of 329aa36's layers/; the first run, at 812cd65, stopped on
    # MimeKit's stack-overflow.txt in the harness's address parsing, after the first five sets, whose figures
    # the full run repeated): 108 files, 46 machine, 38 people, 24 other. Machine answered: emailengine 0/12,
    # listmonk 0/2, mail-auth 1/9, parsedmarc 1/8, mox 1/7, mimekit 0/3, froide 0/5; all 3/46 (6.5 %).
    # People refused: mail-auth 0/6, mox 0/1, mimekit 1/18, froide 1/13; all 2/38 (5.3 %). Other refused
    # 16/24 (not scored). Which messages were missed was not read then; they were read afterwards and
    # tuned on (99ed75f: machine answered 3/46 -> 1/46, people refused 2/38 -> 1/38): tuning since.
    # EmailEngine's bounce fixtures (test/bounce-test.js: Gmail, Outlook, Hotmail, Yahoo, Zoho, mail.ru, 163,
    # Rambler, Fastmail, WorkMail, Postfix, ZoneMTA), its snapshot's newest commit (release 2.79.2).
    "emailengine": Source(
        "postalsys/emailengine", "aea4535093276c90d942e0e1723088f316b23754", "tuning", "machine"
    ),
    # listmonk's two sample bounces (Gmail, Proton), committed with its bounce processing (1ae98699, "Add
    # support for bounce processing"; the later test-messages directory is not in its snapshot).
    "listmonk": Source("knadh/listmonk", "1ae98699e7fe5be8c0f4ede5042a88e38e90214a", "tuning", "machine"),
    # Stalwart's mail-auth crate: ARF reports, DMARC aggregate reports (Google, Mail.ru, Microsoft, Amazon
    # SES, a small provider), SMTP TLS reports, and DKIM2 test messages; its snapshot's newest commit.
    "mail-auth": Source(
        "stalwartlabs/mail-auth", "0e93300e5c77b5e83ea5562d9a7e781278514fa2", "tuning", "machine"
    ),
    # parsedmarc's samples: DMARC aggregate and failure (forensic) reports and an SMTP TLS report, as
    # mailed; its snapshot's newest commit.
    "parsedmarc": Source(
        "domainaware/parsedmarc", "6358c364018af0815b59087eef99ff914bb6fa51", "tuning", "machine"
    ),
    # mox (a Go mail server): its testdata's DMARC and TLS reports, junk-filter spam and an imported
    # maildir; its snapshot's newest commit.
    "mox": Source("mjl-/mox", "1c9587665b321199312e11b6a47a0480a9e2750f", "tuning", "machine"),
    # MimeKit's UnitTests/TestData/messages: DSNs and a Postfix bounce beside its parser's test messages
    # written as people's mail; its snapshot's newest commit.
    "mimekit": Source("jstedfast/MimeKit", "cf6d38dd0a1a26b5145c10b35e971efc133e1fb3", "tuning", "machine"),
    # FragDenStaat's froide (freedom-of-information requests by mail): its bounce tests' bounces and the
    # public bodies' replies its mail tests read, two of them automatic acknowledgements; its snapshot's
    # newest commit.
    "froide": Source("okfde/froide", "6e855bdd1935d741aa354c8c5bd681a955fd5c89", "tuning", "machine"),
    # Fifteenth split, machine mail (tuning since its misses were read): four projects no round had read, each
    # set's messages classed machine/person/list/other from the project's own tests, fixture names and headers
    # (never by the screening), recorded here with their rows in scripts/measure_machine_mail.py before they
    # were measured. Files that copy a set already measured are not scored (Exim's 0224/0237/9001.CALLER,
    # which sisimai's README says it copied; go-gmime's FBL-auth.eml, sisimai's arf-14; RFC 3464's and RFC
    # 5965's examples that flanker, sisimai and mail-auth hold), nor another file of their own set. Measured
    # once (after 8b4cee9 recorded them, the screening as of 99ed75f): machine answered 0/222 (exim 0/213,
    # go-gmime 0/3, kumomta 0/6), people refused 2/19 (go-gmime 0/5, django-mailbox 2/14); go-gmime's list
    # post refused as bulk (1/1). Which messages were missed was not read then; they were read afterwards
    # (both people refused came through GoDaddy's forwarder, which stamps "Precedence: bulk"; the screening
    # follows RFC 3834 there and was not changed): tuning since. Exim's test suite: test/mail, the mailboxes
    # its tests leave, each mbox split into its messages: Exim's own notices from Mailer-Daemon (bounces,
    # delay warnings, frozen and filter-error notices) and its autoreply transport's messages are machine
    # mail; the messages the test scripts inject are not scored. Its snapshot's newest commit.
    "exim": Source("Exim/exim", "13835a3c1e057efad7da269c0f93bf2eac850205", "tuning", "machine"),
    # SendGrid's go-gmime (Go bindings of GMime): gmime/fixtures, DSNs and a Postfix bounce beside people's
    # test messages, spam and newsletters; its snapshot's newest commit.
    "go-gmime": Source("sendgrid/go-gmime", "9326dd0f4619b06caff9c384596c30caa59882fb", "tuning", "machine"),
    # KumoMTA (a Rust MTA): crates/kumo-log-types/data, the DSNs and ARF reports its rfc3464.rs and
    # rfc5965.rs tests parse; its snapshot's newest commit.
    "kumomta": Source("KumoCorp/kumomta", "3ebc1e8585e0e989cfcf50a93c94a803610249e8", "tuning", "machine"),
    # django-mailbox (Django's mailbox poller): django_mailbox/tests/messages, people's test messages (two
    # relayed by a forwarder that marks them Precedence: bulk), two spam; its snapshot's newest commit.
    "django-mailbox": Source(
        "coddingtonbear/django-mailbox", "4c7135469e32757605f26af8515eda455b89f703", "tuning", "machine"
    ),
    # Eighteenth split, machine mail (held out): three projects no round had read, each set's messages classed
    # machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), recorded here with their rows in scripts/measure_machine_mail.py before they were measured.
    # A file that copies another file of its own set is not scored; none copies a set already measured.
    # Measured once at the screening of 5de7559 (machine answered 11/40, people refused 0/94), then its misses
    # were read (stop 58; nothing in the screening changed for them): tuning since.
    # Apache SpamAssassin: t.rules (a message per rule test, "fp" ones to miss the rule: bounces,
    # challenge-response and virus notices of its VBounce rules, people's Outlook mail, fragments),
    # t/data/nice and t/data/welcomelists (ham: people's mail, list posts, newsletters, transactional
    # notices); its snapshot's newest commit.
    "spamassassin": Source(
        "apache/spamassassin", "f7fe7b82a2db63ee1406d74d88ce564b69881954", "tuning", "machine"
    ),
    # Dovecot's Pigeonhole (Sieve): the inline messages of tests/extensions/vacation/*.svtest, written out as
    # files (scripts/measure_machine_mail.py says how); its reply.svtest asserts which the vacation action
    # must not answer (bulk, auto-submitted, X-Auto-Response-Suppress, a list) and which it answers; its
    # snapshot's newest commit.
    "pigeonhole": Source(
        "dovecot/pigeonhole", "d0d2bedb71d227bdac782c244f455724fa0f2688", "tuning", "machine"
    ),
    # Best Practical's Request Tracker: t/data/emails, t/data/gnupg/emails and t/data/smime/mails, people's
    # test messages and a DSN (sendmail.t: "It's the bounce"), and the bulk message t/mail/autogenerated.t
    # builds inline ("Is AutoGenerated"); its snapshot's newest commit.
    "rt": Source("bestpractical/rt", "72106ba9935f3a2bab3d55572066cbfbbdc7f9ab", "tuning", "machine"),
    # Nineteenth split, machine mail (held out): three projects no round had read, each set's messages classed
    # machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), recorded here with their rows in scripts/measure_machine_mail.py before they were measured.
    # A file that copies a set already measured, or another file of its own set, is not scored. Measured once
    # at the screening of 5de7559 (screening.py unchanged since), its misses unread: machine answered 1/18
    # (stalwart 1/8, schleuder 0/4, inmail 0/6), people refused 1/24 (inmail 1/8, silently), machine mail
    # handed to a person 0/18. Its misses were read then (stop 58) and tuned on: MDaemon's X-MDDSN-Message
    # (stalwart's bounce.4) and List-Unsubscribe alone handed to a person (inmail's person): 0/18, 1/24
    # handed, 0 silently. Tuning since.
    # Stalwart's mail server: tests/resources/smtp/dsn (the DSNs its queue tests compare with what it
    # builds), the messages of tests/resources/smtp/antispam/bounce.test written out as files
    # (scripts/measure_machine_mail.py says how), tests/resources/smtp/messages and milter/message.eml; its
    # snapshot's newest commit (its reports are mail-auth's, a set already measured: not read).
    "stalwart": Source(
        "stalwartlabs/mail-server", "55e62a683048d934a3890e86e6384c65fc29b0f2", "tuning", "machine"
    ),
    # Schleuder, the encrypting mailing-list manager: spec/fixtures/mails (a bounce its receive_bounce_spec
    # reads, the Debian BTS notices its message_spec must not call bounces, people's Thunderbird, Mutt and
    # Exchange messages, fragments; its bounces/ are bounce_email's, measured); its snapshot's newest commit.
    "schleuder": Source(
        "schleuder/schleuder", "878fdba4c3c3f5982e183a9b144424025e94510d", "tuning", "machine"
    ),
    # Drupal's Inmail module (bounce processing of incoming mail), as jungleran/inmail holds it (Drupal's own
    # repository is not on GitHub): tests/modules/inmail_test/eml (its DSN analyzers' bounces, an
    # out-of-office reply, a conversation's messages, display tests) and modules/inmail_demo/eml; the copy's
    # newest commit.
    "inmail": Source("jungleran/inmail", "362d95a0cca795c4243913ec6e4568871653eba6", "tuning", "machine"),
    # Twentieth split, machine mail, measured once at the screening of 58a31a0 (the shipped one), its misses
    # unread: machine answered 6/11 (comm-central 4/4, otobo 2/7), people refused 3/60 (comm-central 1/42,
    # otobo 2/18, all handed to a person), machine mail handed to a person 1/11. Its misses were read then
    # (stop 58) and tuned on: a local part's "daemon" (Bugzilla's), trackers' own headers, OTRS/OTOBO's and
    # X-No-Loop's loop marks: 1/11 (Thunderbird's stored feed item, which arrives by no mail), 3/60 handed.
    # Tuning since.
    # Twentieth split, machine mail (held out): Thunderbird's own test messages (no round had read them; the
    # thunderbird set is thunderbird-android's, thunderbird-locales read only nsMsgCompose.cpp of this
    # repository), each classed machine/person/list/other from its tests, fixture names and headers (never by
    # the screening), recorded here with its rows in scripts/measure_machine_mail.py before it is measured. A
    # file that copies a set already measured, or another file of its own set, is not scored.
    # mozilla/releases-comm-central: mailnews/test/data (less smime, smime-manual, db-tinderbox-invalid),
    # the bayesian-spam-filter, local, compose and news test data, mail/test/browser's message-reader,
    # message-window, composition, attachment and openpgp/data/eml messages and the WebExtension API tests'
    # messages; its snapshot's newest commit.
    "comm-central": Source(
        "mozilla/releases-comm-central", "cf9726f56328e24a2cd2d24eaf01563c676a28e6", "tuning", "machine"
    ),
    # OTOBO (the OTRS fork; no round had read OTRS or its forks): scripts/test/sample/PostMaster,
    # EmailParser, PGP and SMIME/SMIME-Test.eml, and the messages of scripts/test/PostMaster/LoopDetection.t
    # written out as files (scripts/measure_machine_mail.py says how); its snapshot's newest commit.
    "otobo": Source("RotherOSS/otobo", "9f0e4d921d0b6458275e68e50ebb882ac48a9261", "tuning", "machine"),
    # Eleventh split, second part: recorded after that round's rules were final (ce5c80c) and before they were
    # measured, because the first part states a whole text for 32 bodies only.
    "esc-chatmail": Source(
        "Kevinmthau/esc-chatmail", "07ad1383f6f98eca4758e41c9d5bd896c71d77d0", "tuning", "text"
    ),
    # The twelfth split (tuning since the thirteenth round, its misses read: ad32db5): recorded with their
    # adapters and their declared contract differences before they were measured. askbot's commit is its
    # snapshot's newest (release 0.13.0); alga-psa's too (only shared/lib/email and docs/inbound-email read);
    # clearfeed's is its newest (#2).
    "askbot": Source("ASKBOT/askbot-devel", "60ab07ffc56175b76b5a8159c23942182e81f874", "tuning", "text"),
    "alga-psa": Source("Nine-Minds/alga-psa", "432f5f5887b089e9179655e2c856fd34d0912295", "tuning", "text"),
    "clearfeed": Source(
        "clearfeed/email-reply-parser", "63f7174791c0a223d0b90a742ca476c0f795b62f", "tuning", "text"
    ),
    # Twelfth split, second part: recorded after the first part was measured once (20 bodies), before it was
    # measured. The commit is xinminlabs/gitlabhq's newest (its own "trigger awesomecode.io notification"
    # over GitLab's history of December 2017); only the spec, its fixtures and the parser were read.
    "gitlab": Source("xinminlabs/gitlabhq", "5e2042ac81b2bbbc3e37daf9acac362317db0d04", "tuning", "text"),
    # The thirteenth split (tuning since the fourteenth round, its misses read: fc996c4): recorded with their
    # adapters and their declared contract differences before they were measured. iznik-server's commit is its
    # snapshot's newest ("redirect to monorepo"; the tests, the messages and include/message/Message.php are
    # still there); chiliproject's is the last that holds the enhanced incoming mail plugin (d8d64e1c, "Tags
    # processing improved"; the next, 9be599f6, removes it); tempo-email-parser's is its snapshot's newest.
    # Measured once, at f6e9510 (the reader of 77271fa's layers/), with the 56 tuning sets named (none of the
    # 50 bodies is one a tuning set holds): freegle 9/19 exact (9/19 under our contract), history as new 1,
    # words dropped 4; chiliproject (no whole text) history as new 0, words dropped 0 on 12; tempo 10/19
    # (16/19 under our contract), history as new 0, words dropped 7; held out 19/38 (50 %), under our contract
    # 25/38 (66 %), history as new 1, words dropped 11, bodies 50; the same as HTML. Measured again once, at
    # the thirteenth round's final reader (ad32db5, written from the twelfth split's misses only): the same
    # figures. Its misses were read then.
    "freegle": Source("Freegle/iznik-server", "c641b7b99347653fa8048b48703d655396cada85", "tuning", "text"),
    "chiliproject": Source(
        "tipitnet/chiliproject", "d8d64e1c48adcfeb1d409e1729b1cea3eb876f83", "tuning", "text"
    ),
    "tempo": Source(
        "yourtempo/tempo-email-parser", "1adad9ba643a0df1c4b389e441282f2a14a7ae0c", "tuning", "text"
    ),
    # The fourteenth split (tuning since its misses were read): recorded with their adapters and their
    # declared contract differences before they were measured. inbox-zero's commit is its snapshot's newest
    # (4f70dcef, "fix(reply-zero): …"; only the five test files the adapter names were read); lobsters' is
    # 5afb02d8, the last before b3ac14ee ("rm unused test from ddfa109a") removed
    # spec/models/email_parser_spec.rb with the mailing-list mode; thunderbird-conversations' is its
    # snapshot's newest (2ce2cf22; addon/tests/quoting.test.mjs last changed in b0e3ce97); freescout's is its
    # snapshot's newest (ab277253; tests/Unit/ ReplySeparationTest.php last changed in 24e0a9a0, "Remove
    # Outlook reply header from replies to email notifications"). Only the test files each adapter names were
    # read. Measured once, at b77262e (the reader of fc996c4's layers/), with the 63 tuning sets named (none
    # of the 43 bodies is one a tuning set holds): inbox-zero 25/36 exact (28/36 under our contract), history
    # as new 1, words dropped 1, bodies 37 (as HTML: 26/36, 29/36 under our contract, history as new 1, words
    # dropped 0); lobsters 2/2 (2/2), history as new 0, words dropped 0; thunderbird-conversations 1/2 (1/2),
    # history as new 0, words dropped 0, one behind the unsure marker; freescout 2/2 (2/2), history as new 0,
    # words dropped 0; held out 30/42 (71 %), under our contract 33/42 (79 %), history as new 1, words dropped
    # 1, bodies 43; as HTML 31/42 (74 %), under our contract 34/42 (81 %), history as new 1, words dropped 0.
    # (Tuning in the same run: 1290/1547 exact, 1312 under our contract, history as new 2, words dropped 86,
    # bodies 3591.) Its misses were not read then; they were read afterwards and tuned on (df4462e: 30/42
    # -> 32/42, history as new 1 -> 0): tuning since.
    "inbox-zero": Source("elie222/inbox-zero", "4f70dcefc55c65f2664ec27a19e118003138fb5f", "tuning", "text"),
    "lobsters": Source("lobsters/lobsters", "5afb02d8691704e31dfb2495eba13688e2e6ea3b", "tuning", "text"),
    "thunderbird-conversations": Source(
        "thunderbird-conversations/thunderbird-conversations",
        "2ce2cf2212fc9082d3e8c58abfd63326b3bc94a7",
        "tuning",
        "text",
    ),
    "freescout": Source(
        "freescout-help-desk/freescout", "ab2772536811d5de6e23121c5d086aeb50f3db2c", "tuning", "text"
    ),
    # The fifteenth split (tuning since its misses were read): recorded with their adapters and their declared
    # contract differences before they were measured. dreamwidth's commit is its snapshot's newest (075e52c6;
    # t/cleaner-email.t, once t/cleanemail.t, last changed in 947e6870, cgi-bin/DW/CleanEmail.pm in 4d33e9a3);
    # Triage's is its snapshot's newest (c82b51a1; packages/hive:email-ingestion/email-ingestion-tests.coffee
    # last changed in cfacd67, "Port hive:email-ingestion package unit tests from tinytest to mocha");
    # alaveteli's is its snapshot's newest (351eb61e; the email-folding-example fixtures last changed in
    # 6dc2c6fd, "Handle gmail-style quoting from the HTML part of a mail"; remove_quoted_sections now in
    # app/models/incoming_message/quote_handling.rb). Only the files each adapter names were read. Measured
    # once, at a362027 (the reader of df4462e's layers/), with the 67 tuning sets named (none of the 32 bodies
    # is one a tuning set holds): dreamwidth 11/12 exact (11/12 under our contract), history as new 0, words
    # dropped 0, one behind the unsure marker, bodies 12 (the same as HTML); triage 7/9 (7/9), history as new
    # 0, words dropped 1, bodies 9 (the same as HTML); alaveteli 1/11 (7/11 under our contract), history as
    # new 0, words dropped 1, bodies 11 (as HTML: 1/11, 7/11, history as new 0, words dropped 0, one behind
    # the unsure marker); held out 19/32 (59 %), under our contract 25/32 (78 %), history as new 0, words
    # dropped 2, bodies 32; as HTML 19/32 (59 %), under our contract 25/32 (78 %), history as new 0, words
    # dropped 1. (Tuning in the same run: 1322/1589 exact, 1347 under our contract, history as new 2, words
    # dropped 87, bodies 3634; as HTML 1323/1589, 1347, history as new 3, words dropped 86.) Which bodies were
    # missed was not read then; they were read afterwards and tuned on (84d94be: 19/32 -> 20/32, words dropped
    # 2 -> 1): tuning since.
    "dreamwidth": Source(
        "dreamwidth/dreamwidth", "075e52c6d1fa2ec66072964b4bc912d1199d73bd", "tuning", "text"
    ),
    "triage": Source("mpaddock/Triage", "c82b51a11185216f2f130f1bcbcf7c9ca6a9c661", "tuning", "text"),
    "alaveteli": Source("mysociety/alaveteli", "351eb61e0619a6f462bfc6f823c93cc42251d573", "tuning", "text"),
    # The sixteenth split (held out): recorded with their adapters and their declared contract differences
    # before they were measured. monorail's repository is xinghun61/infra, a copy of chromium/infra (the
    # Chromium project's infrastructure repository, Monorail's home, "Open Source Monorail" f2e2a4d6f) with
    # its history; its commit is that snapshot's newest (b5d4783f, 2019-10-01; emailfmt_test.py last changed
    # in 751407df8, framework/emailfmt.py in 08bde87cf). write-it's is its snapshot's newest (96bcf0cc,
    # 2017-09-06; mailit's test modules email_parser/incoming_mail_tests and
    # handle_mails_management_command_test, and mailit/bin/handleemail.py, last changed in edef20df, the
    # fixtures in d1d79b44, "Removing the odd parts in the email. #773"). gala's is its snapshot's newest
    # (b0f094c6; spec/mailboxes/replies_mailbox_spec.rb and app/mailboxes/replies_mailbox.rb last changed in
    # 58653333, "fix: only create comments from email if the sender is in the community"). Only the files each
    # adapter names were read, and each project's code that its declaration cites. Measured once, at 0e2feff
    # (the reader of 84d94be's layers/), with the 70 tuning sets named (4 of monorail's 38 bodies are ones a
    # tuning set holds, measured with it only): monorail 22/34 exact (29/34 under our contract), history as
    # new 0, words dropped 0, one behind the unsure marker, bodies 34 (the same as HTML); write-it 5/5
    # (5/5), history as new 0, words dropped 0, bodies 8 (as HTML: 1/5, 1/5, history as new 0, words dropped
    # 0, four behind the unsure marker); gala 2/3 (2/3), history as new 0, words dropped 0, bodies 3 (the same
    # as HTML); held out 29/42 (69 %), under our contract 36/42 (86 %), history as new 0, words dropped 0, one
    # behind the unsure marker, bodies 45; as HTML 25/42 (60 %), under our contract 32/42 (76 %), history as
    # new 0, words dropped 0, five behind the unsure marker. (Tuning in the same run: 1342/1621 exact, 1373
    # under our contract, history as new 2, words dropped 88, bodies 3666; as HTML 1343/1621, 1373, history as
    # new 3, words dropped 86.) Measured once more at 35c592a (the same reader) against labels of our own
    # contract (scripts/labels/, by a helper who saw only the bodies and the contract paragraph): 41/45 (91%),
    # history as new 1, words dropped 1; as HTML 37/45. Which bodies were missed was read after that (stop 57;
    # write-it's HTML gap: "-- <br>" read as a bare "--"), and tuned on: tuning since.
    "monorail": Source("xinghun61/infra", "b5d4783f99461438ca9e6a477535617fadab6ba3", "tuning", "text"),
    "write-it": Source(
        "ciudadanointeligente/write-it", "96bcf0ccd7b17ccde3bcacc5c86b0daa1697e560", "tuning", "text"
    ),
    "gala": Source("galahq/gala", "b0f094c600ddcd7f003a28ea7a495f5cda3e716e", "tuning", "text"),
    # The seventeenth split (held out): recorded with their adapters and their declared contract differences
    # before they were measured. odoo's repository is aimas/TuniErp-8.0, a copy of Odoo 8.0 renamed
    # "TuniERP"; its commit is that snapshot's newest (66990a32, "TND"); between its first commit (d2146b80)
    # and this one, the base module's test_mail_examples.py changed only in BUG2 and BUG3 (an address
    # and a product renamed), which the adapter does not read (their tests shorten), and test_mail.py not at
    # all (odoo/odoo's own snapshot is 19 GB, over the 500 MiB a snapshot may have). moodle's repository is
    # winmagpantay/dps, a copy of Moodle 4.2.3 (Build: 20231009, its version.php) in one commit (df3ff9fd,
    # "Initial Commit"; moodle/moodle's own snapshot is 1.36 GB); only lib/tests/messageinbound_test.php, its
    # fixtures and lib/classes/message/inbound/handler.php were read (the archive holds only those, the
    # snapshot lacking some large files of the tree). comrade's and reply-parser's commits are their
    # snapshots' newest (baaec70f, 2011-05-25: comrade/mail/tests.py and filters.py last changed in ad3098f,
    # "Move mail filters to a separate module"; 7490a701, "Version bump", 2013-10-29). Only the files each
    # adapter names were read, and the code each declaration cites. Measured once, after 834a0e1 recorded
    # them, at the reader of 61f398c (rules/text.py unchanged since), with the 70 tuning sets named (none of
    # the bodies is one a tuning set holds; comrade's 13 tests build 10 distinct bodies once white space is
    # normalised): odoo (no whole text) history as new 0, words dropped 0, bodies 14 (as HTML: history as
    # new 1, words dropped 0); moodle 7/8 exact (7/8 under our contract), history as new 0, words dropped 1,
    # bodies 8 (the same as HTML); comrade (no whole text) history as new 3, words dropped 0, four behind the
    # unsure marker, bodies 10 (as HTML: history as new 3, five behind the marker); reply-parser 5/6 (5/6),
    # history as new 0, words dropped 0, bodies 6 (the same as HTML); held out 12/14 (86 %), under our
    # contract 12/14 (86 %), history as new 3, words dropped 1, four behind the unsure marker, bodies 38; as
    # HTML 12/14 (86 %), 12/14 (86 %), history as new 4, words dropped 1, five behind the marker. (Tuning in
    # the same run: 1342/1621 exact, 1373 under our contract, history as new 2, words dropped 88, bodies
    # 3666; as HTML 1343/1621, 1373, history as new 3, words dropped 86: the sixteenth split's run gave the
    # same.) Measured again at 12c8669 (the reader of 3409bb9: the same figures but comrade's five behind the
    # marker as HTML, four) and against labels of our own contract (58dac17, its 20 plain bodies): 12/20,
    # history as new 3 (comrade), words dropped 1. Which bodies were missed was read after that (stop 57),
    # and tuned on: tuning since.
    "odoo": Source("aimas/TuniErp-8.0", "66990a3286fc22b99255a8daa534f7ec796993ee", "tuning", "text"),
    "moodle": Source("winmagpantay/dps", "df3ff9fdfa41cb73a0b44818db0a12583a1357af", "tuning", "text"),
    "comrade": Source("bueda/django-comrade", "baaec70f2dd2d64692e56ac13df01e8f16b958df", "tuning", "text"),
    "reply-parser": Source(
        "excid3/reply_parser", "7490a7011750c77c5b5a0b567d1046b7a66622b2", "tuning", "text"
    ),
    # The eighteenth split (held out), its first part: recorded with its adapter before it was measured. The
    # commit is the thunderbird set's (that snapshot's newest); only legacy/ui/legacy/src/main/res/values*/
    # strings.xml and the code the adapter cites (TextQuoteCreator, TextBodyBuilder, QuoteDateFormatter,
    # AccountDefaultsProvider's DEFAULT_QUOTE_PREFIX, DEFAULT_QUOTE_STYLE and DEFAULT_REPLY_AFTER_QUOTE)
    # were read. Its archive is the thunderbird set's (--k9-locales may name the same directory). Measured
    # once at 5de7559 (82/122, history as new 6), then its misses were read and tuned on (59521d0): tuning
    # since.
    "k9-locales": Source(
        "thunderbird/thunderbird-android", "a59bd679859d369c9a39be147e536b825ffd0a6b", "tuning", "text"
    ),
    # The eighteenth split (held out): recorded with their adapters and their declared contract differences
    # before they were measured. Each commit is its snapshot's newest: pinenlime's 9bf743d4 (2026-01-04,
    # "v1.0.1 - Add JSR support"; its tests last changed in a621b6d9, the first commit), zapship's 8fbf972d
    # (2019-07-25, "Make strip_subject public"; its stripped_html tests and fixtures came in ae313170 and
    # 14d4328b) and tachikoma's a4b5f458 (2025-01-31, a release commit; ExtractBody.kt and its test last
    # changed in 8ddb2586, 2024-10-03). Of tachikoma only that test, ExtractBody.kt and README.md were
    # archived. Only the files each adapter names were read, and the code each declaration cites. Measured
    # once, after c92aafd recorded them, at the reader of d7b448c (rules/text.py unchanged since), with the
    # 77 tuning sets named (none of the bodies is one a tuning set holds: the run measured all 38):
    # pinenlime 16/26 exact (16/26 under our contract), history as new 0, words dropped 1, two behind the
    # unsure marker, bodies 30 (as HTML the same but three behind the marker); zapship 3/6 (3/6), history as
    # new 0, words dropped 0, two behind the marker, bodies 6 (the same as HTML); tachikoma 0/2 (1/2),
    # history as new 0, words dropped 1, one behind the marker, bodies 2 (the same as HTML); held out 19/34
    # (56 %), under our contract 20/34 (59 %), history as new 0, words dropped 2, five behind the unsure
    # marker, bodies 38; as HTML 19/34 (56 %), 20/34 (59 %), history as new 0, words dropped 2, six behind
    # the marker. (Tuning in the same run: 1387/1681 exact, 1425 under our contract, history as new 5,
    # words dropped 89, behind the marker 173, bodies 3756; as HTML 1387/1681, 1425, history as new 7,
    # words dropped 89.) Which bodies were missed was not read then. Measured once more at 5de7559 (the same
    # reader) against labels of our own contract (e3ab903, its 34 plain bodies): pinenlime 25/30, history as
    # new 3; zapship 0/2; tachikoma 1/2, history as new 1; held out 26/34 (76 %), history as new 4 (as HTML
    # 3), words dropped 0. Its misses were read after that (stop 58; pinenlime's README slice mended, 20/34
    # with the shipped reader) and tuned on (9fdbb97): 22/34, labels 29/34, history as new (labels) 2. Tuning
    # since.
    "pinenlime": Source(
        "Pine-Lime/email-body-parser", "9bf743d427d2cb08e3c8705e48b0f337c6811ff6", "tuning", "text"
    ),
    "zapship": Source("Zapship/email_parser", "8fbf972d89af18a2073ef0ebd3bd20395d6c61c9", "tuning", "text"),
    "tachikoma": Source(
        "SourceForgery/tachikoma", "a4b5f4587b759ce4dd59ca03af07bf3b662e3246", "tuning", "text"
    ),
    # The nineteenth split (held out): recorded with its adapter before it was measured. Only the files the
    # adapter cites were read (program/localization/index.inc and */labels.inc; compose.php, rcmail.php's
    # format_date, rcmail_sendmail.php's reply_subject and format_flowed's caller, rcube.php's load_language
    # and gettext, app.js's caret, config/defaults.inc.php); no round read the project.
    "roundcube-locales": Source(
        "roundcube/roundcubemail", "28b44419ee44c8749a85e7183325055c2cf68a4d", "tuning", "text"
    ),
    # Read from thunderbird/thunderbird-l10n @ that commit (*/mail/chrome/messenger/messengercompose/
    # composeMsgs.properties only) with, from mozilla/releases-comm-central
    # @ cf9726f56328e24a2cd2d24eaf01563c676a28e6, its en-US composeMsgs.properties, mailnews/mailnews.js and
    # mailnews/compose/src/nsMsgCompose.cpp (archived under comm-central/); the serializer's empty quoted line
    # from Floorp-Projects/Floorp's copy of dom/base/nsPlainTextSerializer.cpp. Thunderbird desktop's
    # translations and composition; the thunderbird set is thunderbird-android's preview tests.
    "thunderbird-locales": Source(
        "thunderbird/thunderbird-l10n", "5d7cde6f5d9237b64f7de733bb9fbb121055848a", "tuning", "text"
    ),
    # Claws Mail's own git, as eworm-de/claws-mail mirrors it: only po/*.po (the reply template's msgstr)
    # and src/compose.c, src/prefs_common.c, src/quote_fmt_lex.l, src/quote_fmt_parse.y were read. An
    # earlier round looked for Claws Mail tests that state a reply's text and found none; its translations
    # were not read.
    "claws-locales": Source(
        "eworm-de/claws-mail", "dad7dea84ab94bc1a9e5a35bd755756ecccc5a21", "tuning", "text"
    ),
    # The twentieth split (held out): recorded with its adapter before it was measured. Only the files the
    # adapter cites were read (SoObjects/Mailer/SOGoMail*Reply.wo, SOGoMailReply.m, SOGoMailForward.m,
    # SOGoMailObject+Draft.m and SOGoMailObject.m's date; SoObjects/SOGo/SOGoDefaults.plist,
    # SOGoDateFormatter.m, SOGoUser.m, SOGoUserDefaults.m, WOResourceManager+SOGo.m; UI/MainUI/*.lproj/Locale;
    # MessageEditorController.js's caret), with SOPE's WOHTMLParser.m and NSString+misc.m (MailQuoting) as
    # the index holds Alinto/sope. An earlier round looked for SOGo tests and read none; its translations
    # and composition code were not read before.
    "sogo-locales": Source("Alinto/sogo", "ee2ebbb81cc0538626988e47d70ce4c0d4195377", "tuning", "text"),
    # Only locale/*/LC_MESSAGES/imp.mo (and their .po, to read them), config/prefs.php, lib/Compose.php,
    # lib/Prefs/AttribText.php, js/compose.js and lib/Dynamic/Compose/Common.php were read, with
    # horde/Text_Flowed's lib/Horde/Text/Flowed.php as the index holds it. An earlier round looked for Horde
    # IMP tests that state a reply's text and found none; its translations and composition were not read.
    "imp-locales": Source("horde/imp", "fd9212ca3b72ff834504af4886f7d95138619bd4", "tuning", "text"),
    # Only language/*.php (the lead-in's string), modules/core/functions.php (interface_langs),
    # modules/core/message_functions.php (the reply's fields and text), modules/core/hm-mailbox.php and
    # modules/imap/handler_modules.php (the text fetched), modules/smtp/modules.php (the compose form),
    # modules/smtp/site.js and js_modules/route_handlers.js (the caret), lib/module.php (trans) and
    # lib/environment.php (the default compose type) were read. An earlier round listed Cypht among the
    # clients not looked at; none of its files was read before.
    "cypht-locales": Source("cypht-org/cypht", "da5c9651a6cf8606f32e410ad99a5ee50b7788db", "tuning", "text"),
    # Twenty-first split, machine mail (tuning since its misses were read, stop 59): four projects no round
    # had read, each set's files classed
    # machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), recorded here with their rows in scripts/measure_machine_mail.py before they are measured.
    # CiviCRM's commit c78ab9ea is upstream's (colemanw's merge of #34274, April 2026), read from
    # mattwire/civicrm-core's snapshot, which holds it (civicrm-core's own snapshot is 548 MB, over the
    # 500 MiB a snapshot may have); its fixtures last changed in 234f34e1 ("Fix incoming bounce processing").
    "civicrm": Source(
        "civicrm/civicrm-core", "c78ab9eae201f8bb152cf44541fdad4e909a9e10", "tuning", "machine"
    ),
    # Lamson's snapshot's newest commit (moggers87/salmon, its fork, holds the same test messages: not read).
    "lamson": Source("zedshaw/lamson", "8a8ad546ea746b129fa5f069bf9278f87d01473a", "tuning", "machine"),
    # Mail::Box's snapshot's newest commit; only t/folders/mbox.src is read.
    "mail-box": Source(
        "markov2/perl5-Mail-Box", "81668f69a5e941908c5cfce21a7388ec6a3c5619", "tuning", "machine"
    ),
    # Mail::ListDetector 1.04 as gitpan imported it from CPAN; its snapshot's newest commit.
    "mail-listdetector": Source(
        "gitpan/Mail-ListDetector", "e5e44916f615c56ff31d6793b51391e5180c601a", "tuning", "machine"
    ),
    # Twenty-first split (tuning since its misses were read, stop 59): recorded before it was measured.
    # Real lists' mail in other projects' test
    # data, read as thread corpora (scripts/measure_new_text.py's _sampled_thread_cases). bigbang: only
    # tests/data/3GPP_mbox/*.mbox, tests/data/2001-November.txt and tests/data/bigbang-dev-test.txt (and its
    # ingress code, to see how it writes an mbox) were read; its LISTSERV notebooks (tests/data/3GPP/*.LOG*)
    # were looked at, not kept (most messages have no Message-ID). ponymail: test/resources/*.mbox and the
    # Apache lists' .eml files; rfc2822-A5.eml (RFC 2822's example) left out.
    "bigbang": Source("datactive/bigbang", "cdf9b06b9e0414b544eda62044cb69f59c1fd174", "tuning", "text"),
    "ponymail": Source(
        "apache/incubator-ponymail-foal", "88ce2a3c6abf156fa9fc61bf8e2783c509befe2d", "tuning", "text"
    ),
    # Held out, twenty-fourth split (text, second part): recorded before it is measured. Real lists' mail in
    # other projects' test data, read as thread corpora as the twenty-first split's are
    # (scripts/measure_new_text.py's _sampled_thread_cases). jwzthreading: only
    # jwzthreading/tests/data/fedora-devel-mailman/2010-January.txt.gz (fedora-devel-list, January 2010) and
    # its README were read; the thread page its tests compare with was not. mail-thread (Mail::Thread 2.55,
    # CPAN's last release, as gitpan holds it): only t/testbox* (the mailboxes its tests thread), its Changes
    # and META.yml and the test reading t/testbox-5 were read. No Message-ID of theirs is in another set.
    "jwzthreading": Source("rth/jwzthreading", "6776f978a1cdd33edcf0ec47117768fdf49d13e4", "tuning", "text"),
    "mail-thread": Source("gitpan/Mail-Thread", "d69a1bb86a03f602bad6cd2494567d2829481a40", "tuning", "text"),
    # Twenty-second split (machine): recorded before it was measured; tuning since stop 59. Each set's
    # messages classed machine/person/list/other from the project's own tests, fixture names and headers
    # (never by the screening), with its rows in scripts/measure_machine_mail.py; each commit is its
    # snapshot's newest.
    # modoboa: only modoboa/dmarc/tests/reports and fail-reports. james: only mailbox/store and
    # mailbox/opensearch's src/test/resources/eml, the JMAP integration tests' src/main/resources/eml,
    # server/mailet/mailets/src/test/resources and server/container/core/src/test/resources (its snapshot
    # lacks a test jar of 4 MiB or more: git archive of the whole tree fails, of these paths it does not).
    # baunsu: tests/emails. gmail3: test/fixtures. espocrm: tests/unit/testData/Core/Mail. webklex:
    # tests/messages.
    "modoboa": Source("modoboa/modoboa", "9ec749703cde97636ea5a9db95f4accea63b8a87", "tuning", "machine"),
    "james": Source("apache/james-project", "20bf8083e39be4a750f606e576a162087bb3f18a", "tuning", "machine"),
    "baunsu": Source(
        "ardiesaeidi/node-baunsu", "741bc21bce7b46005e3247845058e583f5228a0f", "tuning", "machine"
    ),
    "gmail3": Source("lollipopman/gmail3", "81595b7fbe1280a67264b0f2e19f2e846757636e", "tuning", "machine"),
    "espocrm": Source("espocrm/espocrm", "2cde9d980f84cfc3caa1adf3275a0817e1e49bfa", "tuning", "machine"),
    "webklex": Source("Webklex/php-imap", "5656386a3597dacf93f8887d2016ed3cea2adbb7", "tuning", "machine"),
    # The twenty-second split (tuning since stop 59): recorded with its adapters before it was measured. Each
    # commit is its snapshot's newest. balsa: only po/*.po and src/sendmsg-window.c (quote_body,
    # fill_body_from_part, sendmsg_window_reply, the reply subject), src/balsa-app.h (DEFAULT_DATE_FORMAT),
    # src/save-restore.c (QuoteString, DateFormat), libbalsa/mime.c (process_mime_part) and
    # libbalsa/identity.c (reply_string) were read. nocc: lang/*.php, config/conf_lang.php,
    # config/conf.php.dist, common.php, action.php (add_quoting, add_signature), utils/functions.php
    # (mailquote, aff_mail, remove_stuff, format_date, format_time), classes/user_prefs.php (the defaults),
    # classes/nocc_security.php, classes/ nocc_headerinfo.php and html/send.php. squirrelmail: SquirrelMail's
    # Subversion tree as sitle mirrors it (its last commit 2015-01-28, 1.5.2-svn):
    # locales/locale/*/LC_MESSAGES/squirrelmail.po and squirrelmail/ src/compose.php (getReplyCitation, the
    # reply body, showInputForm), functions/date.php, functions/ strings.php (sqBodyWrap),
    # include/load_prefs.php, include/options/compose.php, templates/default/js/ default.js (checkForm) and
    # class/mime/AddressStructure.class.php.
    "balsa-locales": Source("GNOME/balsa", "270c45480d030dae8c67ffeecd2575cef03f1e89", "tuning", "text"),
    "nocc-locales": Source("jespersgaard/NOCC", "bb4affa9613796217822755f10b19c7a63febb50", "tuning", "text"),
    "squirrelmail-locales": Source(
        "sitle/squirrelmail-src", "0c6230fec84a2a48332799e75feb88c872894e50", "tuning", "text"
    ),
    # The twenty-third split (held out): recorded with its adapter before it is measured. The commit is the
    # snapshot's newest (2024-09-06, "GIT_SILENT Sync po/docbooks with svn"). Only po/*/trojita_common.po
    # (the attribution's msgstr) and src/Gui/MessageView.cpp (quoteText, reply), src/Composer/QuoteText.cpp,
    # src/Composer/SubjectMangling.cpp (replySubject), src/Gui/SimplePartWidget.cpp (quoteMe),
    # src/Gui/ComposeWidget.cpp (createReply, setResponseData), src/Composer/MessageComposer.cpp (the
    # format=flowed part) and src/Imap/Encoders.cpp (wrapFormatFlowed) were read, with its CMakeLists.txt's
    # Qt 5.15. No round read Trojitá's translations or composition code.
    "trojita-locales": Source("jktjkt/trojita", "d6600a058db5a9a224ce47b41dee320df0c75e56", "tuning", "text"),
    # Twenty-third split (machine): recorded before it was measured; tuning since stop 59. Each set's messages
    # classed machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), with its rows in scripts/measure_machine_mail.py; each commit is its snapshot's newest.
    # dada-mail: only app/dada/t/corpus/email_messages. abuseio: only extra/notifier-samples. patchwork: only
    # patchwork/tests/data (its series mboxes written out one message a file, WRITTEN_OUT).
    "dada-mail": Source(
        "justingit/dada-mail", "a4e7e65506245ff8620470e61e4e474ab01c5886", "tuning", "machine"
    ),
    "abuseio": Source("AbuseIO/AbuseIO", "2fdc4963d4012f9447b2ea4d6df47dc8e36e8301", "tuning", "machine"),
    "patchwork": Source(
        "getpatchwork/patchwork", "644cef7cd369abd39eba9523f8ecbc16d2ea4206", "tuning", "machine"
    ),
    # The twenty-fourth split (text, held out): recorded with its adapter before it is measured. The commit is
    # the snapshot's newest (2026-08-21, "Merge branch 'master' into 'master'"). Only
    # server/language/*/LC_MESSAGES/grommunio_web.po (the labels', date format's and day and month names'
    # msgstr), defaults.php (ENABLED_LANGUAGES) and the files its adapter cites were read:
    # client/zarafa/mail/data/Templates.js (plaintextQuotedTemplate), client/zarafa/mail/MailContextModel.js
    # (initRecordBody, initRecordSubject, getSignatureData), client/zarafa/Date.js (formatDefaultTime),
    # client/extjs-mod/Translations.js, client/extjs/ext-all-debug.js (Date.format, htmlEncode, XTemplate),
    # client/zarafa/settings/data/SettingsDefaultValues.js, client/zarafa/mail/dialogs/MailCreatePanel.js
    # (update), client/zarafa/common/form/TextArea.js (setCursorLocation),
    # client/zarafa/core/data/IPMRecipientRecord.js (formatRecipient), client/zarafa/core/data/IPMRecord.js
    # (getBody, setBody), server/includes/translations.js.php (_), server/includes/core/class.language.php,
    # class.conversion.php (mapXML2MAPI) and class.operations.php (getMessageBody, saveMessage). No round read
    # grommunio-web's or Kopano WebApp's translations or composition code.
    "grommunio-locales": Source(
        "grommunio/grommunio-web", "353ea1ae0217aae4ec58af21496ca080ec32fbcf", "tuning", "text"
    ),
    # Twenty-fourth split (machine): recorded before it is measured, held out. Each set's messages classed
    # machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), with its rows in scripts/measure_machine_mail.py; each commit is its snapshot's newest.
    # mw-bouncehandler: only tests/phpunit/bounce_emails and the two tests that read them. hyperkitty: only
    # hyperkitty/tests/testdata. private-relay: only emails/tests/fixtures/*_incoming.email, its README.md and
    # the views tests that read them (views_tests.py in emails/tests).
    "mw-bouncehandler": Source(
        "wikimedia/mediawiki-extensions-BounceHandler",
        "360a47ba56f7d9e7bf0e654a884c70262d3d7290",
        "tuning",
        "machine",
    ),
    "hyperkitty": Source(
        "hyperkitty/hyperkitty", "df1592a0e00f4ff734d0d703d3c43795dfaabfcd", "tuning", "machine"
    ),
    "private-relay": Source(
        "mozilla/fx-private-relay", "978af78f8146ca244f5532255d3e8c399d27c052", "tuning", "machine"
    ),
    # The twenty-fifth split (text, held out): recorded with its adapter before it is measured. The commit is
    # the snapshot's newest (2022-09-01). Only rainloop/v/0.0.0/app/localization/webmail/*.yml (the reply
    # title's translations) and the files its adapter cites were read: dev/View/Popup/Compose.js (initOnShow,
    # setSignatureFromIdentity), dev/Common/Utils.js (htmlToPlain, plainToHtml, splitPlainText,
    # replySubjectAdd), dev/Common/HtmlEditor.js, dev/Common/Momentor.js, dev/Common/Translator.js,
    # dev/Model/Email.js (toLine), dev/Stores/User/Message.js (setMessage), vendors/ckeditor-plugins/plain and
    # signature, vendors/ckeditor/build-config.js and ckeditor.js (its basicWriter), ServiceActions.php
    # (compileLanguage), Actions.php (GetLanguages, DoSendMessage), Utils.php (ReadAndAddLang),
    # tasks/vendors.js and package.json (moment 2.29.1: its npm package, unpacked into node_modules/moment of
    # the set, writes the dates). No round read RainLoop's or SnappyMail's translations or composition code.
    "rainloop-locales": Source(
        "RainLoop/rainloop-webmail", "9bf8fa5b63d7e6871ee533126a7e1b1c85ee45b5", "tuning", "text"
    ),
    # Twenty-fifth split (people's mail): recorded before it is measured, held out. Each set's messages
    # classed person/list/machine/other from the project's own tests, fixture names and headers (never by the
    # screening), with its rows in scripts/measure_machine_mail.py; each commit is its snapshot's newest.
    # mimetreeparser: only autotests/testdata/*.mbox, its README and autotests/core/mimetreeparsertest.cpp.
    # sup: only test/fixtures/*.eml and test/test_message.rb, test/test_header_parsing.rb,
    # test/unit/test_rmail_message.rb. astroid: only tests/mail/test_mail, tests/mail/test_out_of_sync.eml and
    # the tests/test_*.cc that read them.
    "mimetreeparser": Source(
        "KDE/mimetreeparser", "d0c21474fbebabc1ce5babb42216ecfdb9c1f54a", "tuning", "machine"
    ),
    "sup": Source("sup-heliotrope/sup", "246af74692a1470b2d484fbd3ef7eed757e2a876", "tuning", "machine"),
    "astroid": Source("astroidmail/astroid", "e3cf51f9e9dba69a4b7dea6a6d18f10b2e86d6d3", "tuning", "machine"),
    # Twenty-fifth split (machine): recorded before it is measured, held out. Each set's messages classed
    # machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), with its rows in scripts/measure_machine_mail.py; each commit is its snapshot's newest.
    # mail-and-packages: only tests/test_emails/*.eml and the tests that read them (conftest.py and
    # test_helpers.py in tests). combodo-email-synchro: only tests/php-unit-tests/resources/email-samples (its
    # "TEST failure notice.eml" is absent from the snapshot: git archive with ':(exclude)tests/php-unit-tests/
    # resources/email-samples/TEST failure notice.eml') and the three tests that read it
    # (HTMLDOMSanitizerTest.php, ValidateEmlFilesTest.php, RawEmailMessageTest.php). simplelogin: only
    # tests/example_emls, local_data/email_tests and the tests that read them (test_email_utils.py in tests,
    # test_provider_complaints.py in tests/handler).
    "mail-and-packages": Source(
        "moralmunky/Home-Assistant-Mail-And-Packages",
        "f2a8ecfedb5627a8e7a1871ce7948e50c77e1142",
        "tuning",
        "machine",
    ),
    "combodo-email-synchro": Source(
        "Combodo/combodo-email-synchro", "43af84848cc0a10a01513b3497c40dd918efc41f", "tuning", "machine"
    ),
    "simplelogin": Source(
        "simple-login/app", "dbc45fcce4e8e6b4fa615cc729ca95a67bf75266", "tuning", "machine"
    ),
    # The twenty-sixth split (text, held out): recorded with their adapters before they are measured. Whole
    # threads of real lists' mail in other projects' tests, read as thread corpora
    # (scripts/measure_new_text.py's _sampled_thread_cases); each commit is its snapshot's newest. meli: only
    # melib/tests/data/*.mbox.gz (two Git-list threads and their first posts alone) and the test reading them,
    # melib/tests/integration/mbox_parse.rs, were read. emailthreads: only test/data (the .eml files are read;
    # the expected trees, output*.txt, and the headerless test/data/simple are not), test/test_parse.py and
    # README.md. No Message-ID of theirs is in another set.
    "meli": Source("meli/meli", "18baa441936f409ee390c9c1a0e7b1ca11f1b426", "tuning", "text"),
    "emailthreads": Source(
        "emersion/python-emailthreads", "99f1a04fa0dd2ce8a9c870016b067bf56f3d3bfd", "tuning", "text"
    ),
    # The twenty-seventh split (text, held out): recorded with their adapters before they are measured.
    # People's replies whose new text the source's tests state; each commit is its snapshot's newest.
    # bodyparts (the newest commit, 2010-06-22, "tweaking readme"): only spec/ (emails.yml, the two .eml
    # files, the spec and its helper), README.textile (its example and the output it states) and
    # lib/bodyparts.rb were read. planer (2025-02-27): only test/examples/html/*.html,
    # test/planerHtml.test.coffee (its "examples from files" tests; its inline tests, like
    # test/planerText.test.coffee, are ports of talon's) and README.md.
    "bodyparts": Source("max-mapper/bodyparts", "e5c6d11e8821da9e764d2734cd99da7c0950c326", "tuning", "text"),
    "planer": Source("lever/planer", "f15981e2a48f470cbc89099e23e775ffbeb611b6", "tuning", "text"),
    # Twenty-sixth split (machine): recorded before it is measured, held out. Each set's messages classed
    # machine/person/list/other from the project's own tests, fixture names and headers (never by the
    # screening), with its rows in scripts/measure_machine_mail.py; each commit is its snapshot's newest.
    # tine20: only tests/tine20/Felamimail/files and the tests that read them (Controller/MessageTest.php,
    # Controller/Cache/MessageTest.php, Frontend/JsonTest.php, Frontend/ActiveSyncTest.php,
    # Import/ImapTest.php and Model/MessagePipeTest.php in tests/tine20/Felamimail,
    # Calendar/Frontend/iMIPTest.php in tests/tine20). blaze: only test/00[1-7].mail, test/mdir and the tests
    # that read them (arc.t, descr.t, dkim.t, dmarc.t, hdr.t, map.t, mdir.t, pack.t and spf.t in test).
    "tine20": Source("tine20/tine20", "f05c103b4b2bd217775bbef4e681346e02adbdb4", "tuning", "machine"),
    "blaze": Source("dinosaure/blaze", "29466aea1d2e767d9061cbdc257e13e59491fe07", "tuning", "machine"),
    # Twenty-seventh split (machine): recorded before it is measured, held out. Its messages classed
    # machine/person/list/other from the project's own README (never by the screening), with its rows in
    # scripts/measure_machine_mail.py; the commit is its snapshot's newest. email-classifier: only
    # tests/fixtures (its oversized.eml is absent from the snapshot: git archive with
    # ':(exclude)tests/fixtures/oversized.eml'), README.md and app/helpers/enums.py.
    "email-classifier": Source(
        "renat-ibragimov/email_classifier", "7ef79dde9930c98f9796eb1a7cf2ac7582b3c48a", "tuning", "machine"
    ),
}

# Where a source's contract differs from ours, declared from the source's own README, tests or code: the
# names are scripts/measure_new_text.py's DIFFERENCES. Held-out sources are declared when recorded, before
# they are measured. The tuning sources' declarations were written in the twelfth split, after their misses
# had been read in earlier rounds: on them the contract figure shows what the declarations change, it is no
# evidence. A source not named here declares nothing (its contract figure is its raw one).
CONTRACT_DIFFERENCES: dict[str, tuple[str, ...]] = {
    # Held out, twelfth split.
    # alga-psa: docs/inbound-email/reference/reply-parsing.md, "Signature trimming - strips common signatures
    # (`Thanks,`, `Best regards,`, `Sent from …`) within the trailing 12 lines" and "Microsoft Graph |
    # Forwarded chains (`Forwarded message`) … forwarded header breakpoints"; replyParser.test.ts, "keeps user
    # preface while discarding forwarded chains" and "strips signatures and confidentiality footers".
    "alga-psa": ("hides_forwards", "strips_signoff"),
    # clearfeed: README.md, "Removes signatures like `Best wishes`" and its example, whose output drops
    # "Thanks!"; test.js test_resetSignatureRegexes_to_defaults, '"Best regards" should still be hidden by
    # default'.
    "clearfeed": ("strips_signoff",),
    # gitlab: spec/lib/gitlab/email/reply_parser_spec.rb, "handles inline reply": the expected text keeps
    # the quote (its ">" lines) above the answer. (Its parser trims with email_reply_trimmer; nothing else of
    # the trimmer's contract is declared here: these tests state no forward and no sign-off.)
    "gitlab": ("keeps_inline_quotes",),
    # askbot: none. Its extract_reply keeps "the part above the separator"; the user's own signature is
    # removed by a second function (extract_user_signature), which these tests do not call.
    # Held out, thirteenth split.
    # tempo: src/removeQuotations.ts, "Ignore inline quotes. Quotes that are followed by non-quote blocks.",
    # and src/tests/removeQuotations.test.ts, "should preserve inline quotes" (its expected HTML keeps
    # "<blockquote>Here is an inline quote</blockquote>" above "Hope you liked it"); the same tests' expected
    # HTML keeps a signature's "-- " line ("should remove signature from basic email", "should remove both
    # signature and quotations…": "<br />-- <br />"), and the fixture tempo-signature.output-message.html
    # keeps "--<br />I use Tempo to improve my focus" (README: "Extract quotations (replies), signatures":
    # it takes out Gmail's signature block, .gmail_signature, not the line above it).
    "tempo": ("keeps_inline_quotes", "keeps_rfc_signature"),
    # freegle: none. Message::stripQuoted removes ">" and "|" lines, cuts at reply separators and "On …
    # wrote:", and its stripSigs removes client footers ("Sent from my iPhone", "Get Outlook for Android",
    # …), which our contract removes too; no test of testStripQuoted states a forward, a sign-off or an
    # inline quote kept.
    # chiliproject: none. Its tests state no whole text (only what is kept and what is gone), and
    # test_properly_process_fw_mail_content keeps a forward's content ("Some content FW"), as ours does.
    # Held out, fourteenth split.
    # inbox-zero: apps/web/utils/mail.test.ts, describe("removeForwarded option"): "handles Gmail-style
    # forwarded content" ("My response here\n\n---------- Forwarded message ----------…" expected "My response
    # here") and "handles iOS-style forwarded content" ("Begin forwarded message:"); similarity-score.test.ts,
    # "should ignore forwarded payloads below the authored reply"; similarity-score.ts, normalizeForGmail and
    # normalizeForOutlook, which call stripForwardedContent on the sent message. (Its signatures: the
    # provider's signature block and a "-- " signature are out of its text, as of ours; no sign-off is cut.)
    "inbox-zero": ("hides_forwards",),
    # lobsters: none. email_parser_spec.rb, "strips signatures" (a "-- " signature, as ours) and "strips
    # quoted lines with attribution".
    # thunderbird-conversations: none. quoting.test.mjs folds what a message quotes ("-----Original
    # Message-----" and what follows it, blockquotes) into one blockquote and leaves the message's own words
    # outside it.
    # freescout: none. ReplySeparationTest.php cuts at Outlook's reply header ("Von:", "Gesendet:").
    # Held out, fifteenth split.
    # alaveteli: app/models/incoming_message/quote_handling.rb, remove_quoted_sections: "To end of message
    # sections" folds '----*\s*Forwarded message.+----*' and '----*\s*Forwarded by.+----*' and all that
    # follows (hides_forwards); for each rule character (-, _, *, #) it folds the text from a rule line
    # ("(?:[#{scorechar}]\s*){8,}") through a footer's words ("confidential|received\sthis\semail\sin\serror|
    # virus|intended\s+recipient|monitored\s+centrally|…|routinely\s+monitored|MessageLabs|
    # unauthorised\s+use") to the next rule or the end; spec/models/incoming_message_spec.rb, "should
    # correctly fold various types of footer", and "should fold multiline sections"
    # ("foo\n--------\nconfidential" => "foo\nFOLDED_QUOTED_SECTION\n") (folds_disclaimers: a kind of its
    # own, a small function in scripts/measure_new_text.py); and email-folding-example-5.txt.expected keeps
    # the "-- " line and the virus footnote under it (it has no rule for a signature) (keeps_rfc_signature).
    "alaveteli": ("hides_forwards", "keeps_rfc_signature", "folds_disclaimers"),
    # dreamwidth: none. DW::CleanEmail's nonquoted_text cuts at the first ">" line, a "---X---" line ("e.g.,
    # --- Original Message ---"), a line naming the site's own address, and an "On … wrote:" in the last three
    # lines; none of its tests states a forward, a sign-off or a signature.
    # triage: none. extractReplyFromBody splits at "From:" (under an Outlook rule or not), "On … wrote:" and a
    # Gmail date over the ticket's address; its expectations keep the writer's name ("Waggle User") and no
    # forward or signature is stated.
    # Held out, sixteenth split.
    # monorail: appengine/monorail/framework/emailfmt.py, StripQuotedText: "If the rest of message is
    # forwared text, we're done.", FORWARD_OR_EXPLICIT_SIG_PATS r'[^0-9a-z]+(forwarded|original)
    # message[^0-9a-z]+\s*$' cuts it and all that follows; emailfmt_test.py, testBoundaryLines: 'new\n----
    # forwarded message ======\n…' leaves 'new' (hides_forwards). "We cut off the message if we see something
    # that looks like a signature and it is near the bottom of the message.", SIGNATURE_BOUNDARY_RE
    # "cheers|(best |warm |kind )?regards|thx|thanks|thank you" in the last MAX_SIGNATURE_LINES (8) lines;
    # testSignatures: 'new\ntext\n\nThanks,\nName', '…\n\nCheers,\nName', '…\n\nbest regards' leave
    # 'new\ntext' (strips_signoff).
    "monorail": ("hides_forwards", "strips_signoff"),
    # write-it: none. mailit/bin/handleemail.py keeps EmailReplyParser.parse_reply(data).strip() of each text
    # part (the email_reply_parser package: quoted lines, "On … wrote:", a "-- " signature, as ours);
    # EmailAnswer.get_content_text also deletes the "To" address, every other address and the message's
    # identifier from that text, but none of the texts its tests state holds one; no forward, sign-off or
    # signature is stated.
    # gala: none. app/mailboxes/replies_mailbox.rb keeps EmailReplyParser.parse_reply of the mail's text (the
    # email_reply_parser gem 0.5.10); its spec states a quoted reply under "> On … wrote:" and a "-- CLB"
    # signature, both left out of 'Yeah I agree.'; no forward or sign-off is stated.
    # Held out, seventeenth split.
    # odoo: none. Its tests state no whole text (what stays, what is gone), so no declaration changes a
    # figure; openerp/tools/mail.py's html_email_clean cuts quotes (">" lines, blockquotes, an Outlook or
    # Hotmail header and what follows) and signatures ("--" or "---" over the rest, test_00_basic_text:
    # "html_email_clean test for signatures"), as ours cuts "-- " signatures; no test states a forward or a
    # sign-off.
    # moodle: none declared. lib/classes/message/inbound/handler.php, remove_quoted_text: "Retrieve everything
    # from the start until the line before the quoted text" (the first ">" line and the line above it, an
    # attribution, as ours); lib/tests/fixtures/messageinbound/outlook.test keeps the sign-off "Cheers", as
    # ours. Its ios.test EXPECTEDHTML keeps "Sent from my iPad" (it has no rule for a client footer, which our
    # contract takes out): no kind of DIFFERENCES is that, so it is not declared and counts as a miss.
    # comrade: none. Its tests state no whole text; comrade/mail/filters.py's strip_signatures cuts at "-- ",
    # "--" and "Sent from my", strip_quoted at "-----Original Message-----", a "____" rule, "On … wrote:",
    # "From: " and a ">" line, keeping what is above.
    # reply-parser: none. lib/reply_parser.rb keeps what is above "On … wrote:" or a "Reply ABOVE THIS LINE"
    # line, its tags taken out; its spec states no forward, sign-off or signature.
    # Held out, eighteenth split. k9-locales: none. Its bodies are built (the adapter's docstring): what the
    # person wrote is the whole new text, and the bodies hold no forward, sign-off or signature.
    # pinenlime: none declared. README.md: human signatures ("Best, John") "Keeps", as ours keeps a sign-off;
    # mobile auto-signatures ("Sent from my iPhone", "Get Outlook for iOS") and quote headers ("On … wrote:",
    # "-----Original Message-----", "From: ... Sent: ... To: ... Subject: ...", ">" lines) removed, as ours.
    # It also removes mailing-list footers (Google Groups' "You received this message because…", "Click here
    # to unsubscribe"), legal disclaimers ("CONFIDENTIAL: This message contains…", "DISCLAIMER: This email
    # and any files…", under a blank line, no rule line: folds_disclaimers is a footer under a rule line) and
    # image placeholders (src/cleaner.ts, ARTIFACT_PATTERNS: "[image: …]", "[Image]", "[cid: …]"): no kind of
    # DIFFERENCES is one of those, so they are not declared and count as misses where ours keeps them. No
    # test states a forwarded message.
    # zapship: hides_forwards. lib/email_parser/parser.rb, strip_text: "break if
    # ForwardPatterns::FORWARD_BODY_RE.match(line)" (a "--- Forwarded Message ---" line and what follows
    # go); both spec/data/stripped_text messages end in "--- Forwarded Message ---" and a forwarded line, and
    # the text stated for each stops before it. Its strip_text also leaves out ">" lines and an "On … wrote:"
    # line and keeps the text under them, drops "Sent from my …" lines (as ours) and a last line under "--"
    # (not RFC 3676's "-- ", which keeps_rfc_signature is about): no kind, not declared.
    "zapship": ("hides_forwards",),
    # tachikoma: keeps_rfc_signature. ExtractBodyKtTest.kt, "extract body 1": the text it states keeps
    # "--\nPhone: +1800555555\nGTalk: foobar@example.com" above the quote's "On … wrote:" line;
    # ExtractBody.kt's extractBodyFromPlaintextEmail cuts only at a ">" line, a line holding "From:" or
    # "------", or the line naming the address the mail was sent to (and the line above it), never at a
    # signature. Its "extract body 2" keeps a sign-off and the sender's company block, as ours keeps a
    # sign-off; no test states a forward.
    "tachikoma": ("keeps_rfc_signature",),
    # Held out, nineteenth split. roundcube-locales, thunderbird-locales, claws-locales: none declared. Their
    # bodies are built (each adapter's docstring): what the person wrote is the whole new text, and the
    # bodies hold no forward, sign-off or signature.
    # Held out, twentieth split. sogo-locales, imp-locales, cypht-locales: none declared. Their bodies are
    # built (each adapter's docstring): what the person wrote is the whole new text, and the bodies hold no
    # forward, sign-off or signature.
    # Held out, twenty-second split. balsa-locales, nocc-locales, squirrelmail-locales: none declared. Their
    # bodies are built (each adapter's docstring): what the person wrote is the whole new text, and the
    # bodies hold no forward, sign-off or signature.
    # Held out, twenty-third split. trojita-locales: none declared. Its bodies are built (the adapter's
    # docstring): what the person wrote is the whole new text, and the bodies hold no forward, sign-off or
    # signature.
    # Held out, twenty-fourth split. grommunio-locales: none declared. Its bodies are built (the adapter's
    # docstring): what the person wrote is the whole new text, and the bodies hold no forward, sign-off or
    # signature.
    # Held out, twenty-fifth split. rainloop-locales: none declared. Its bodies are built (the adapter's
    # docstring): what the person wrote is the whole new text, and the bodies hold no forward, sign-off or
    # signature.
    # Held out, twenty-first split. bigbang, ponymail: none declared. Thread corpora: no peer states a text
    # (their history is what the thread's earlier messages hold), so there is no contract of theirs to
    # differ from ours; no exact figure is computed on them.
    # Held out, twenty-fourth split (text, second part). jwzthreading, mail-thread: none declared, for the
    # same reason (thread corpora: no peer states a text).
    # Held out, twenty-sixth split. meli, emailthreads: none declared, for the same reason (thread corpora:
    # no peer states a text).
    # Held out, twenty-seventh split. bodyparts: none declared; its README says it splits a reply into "the
    # actual new message and the included reply chain", and its bodies hold no signature or sign-off under the
    # new words for it to keep or drop. planer: none declared; its README says it "does not do signatures",
    # and its tests state only a phrase kept and a phrase dropped, no whole text.
    # Tuning (declared in the twelfth split, after their misses were read).
    # crisp, dspangenberg: README.md, "Removes signatures like `Best wishes`"; its example's output drops
    # "Best regards,\nJohn".
    "crisp": ("strips_signoff",),
    "dspangenberg": ("strips_signoff",),
    # esc-chatmail: PlainTextQuoteRemoverTests.swift, "MARK: - Quote Removal - Forwarded Messages",
    # testRemoveQuotes_forwardedMessageMarker_truncates and …_forwardedMessageDashes_truncates.
    "esc-chatmail": ("hides_forwards",),
    # zimbra: UtGetOriginalContent_data.js, entries 20 ('"Forwarded Message" delimiter', HTML: U OS H U)
    # and 31 ('Alternative delimiter, same meaning as "----- Forwarded Message -----"'): the forward is left
    # out; entries 10, 22, 28, 29 ("Inline reply", "Middle posting": W Q U Q kept whole); entry 12
    # ("Bugzilla mail - make sure first few lines survive", Text: U: all of it original content, its "-- "
    # signature with it).
    "zimbra": ("hides_forwards", "keeps_inline_quotes", "keeps_rfc_signature"),
}

HELD_OUT = frozenset(name for name, source in SOURCES.items() if source.split == "held-out")
