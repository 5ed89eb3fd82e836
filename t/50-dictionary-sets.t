#!/usr/bin/perl
# Dictionary sets on disk and in a process, without a server:
# Cache::Memcached::RustXS::Zstd::DictionarySet (its manifest written, read
# back and refused whole when it is truncated at any byte, malformed, of a
# newer format, or lists one ID twice; dictionaries added, retired, removed,
# re-numbered to small IDs that the zstd command still decodes with; files
# written atomically; writers that race refused) and
# Cache::Memcached::RustXS::Zstd::load_dictionaries (everything checked before
# anything is loaded: truncated, replaced and other sets' files refused; a
# dictionary added to a loaded set found again by the readers, at most once
# per rescan interval, warning once per ID only after a scan that did not
# find it; a manifest of another set put in the folder refused; the rescan's
# perl code dying, re-entering or warning leaves the readers whole and leaks
# nothing).
#
# Dictionaries are loaded for the whole process and never unloaded, so the
# cases that need a process without them run in forked children. Values are
# the real ones of bench/data/values.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use Time::HiRes ();
use Cache::Memcached::RustXS::Zstd qw(:all);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Child qw(in_child);
use CMRXTest::LeakCheck qw(leaked_svs leaktrace_missing);
use CMRXTest::Peers qw(slurp spew run_filter);

my $Set = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $TMP = File::Temp->newdir;
my $HAVE_ZSTD = !system('sh', '-c', 'zstd --version >/dev/null 2>&1');
my @WARNINGS;
$SIG{__WARN__} = sub { push @WARNINGS, $_[0] };

my $corpus = corpus_values('bench/data/values');
my %values = map { my $f = $_; ($f => [ map { $_->[1] } @{ $corpus->{$f} } ]) } qw(api npm gh news);
my %dict = map { ($_ => train_dictionary($values{$_}, size => 4096)) } keys %values;

my $n = 0;
sub fresh_dir { return "$TMP/set" . ++$n }

# Runs $code in a forked child (a process with no dictionary loaded yet,
# CMRXTest::Child); returns what it returned, or "died: ...".
sub in_fresh_process {
    my ($code) = @_;
    my ($out, $child) = in_child(sub {
        my @w;
        local $SIG{__WARN__} = sub { push @w, $_[0] };
        return $code->(\@w);
    });
    return defined $out ? $out : 'died: ' . (defined $child->{died} ? $child->{died} : '');
}

sub error_of { my ($code) = @_; eval { $code->(); 1 } ? '' : $@ }

# ---- writing and reading a set ---------------------------------------------

my $dir = fresh_dir();
my $set = $Set->create($dir);
like $set->identity, qr/\A[0-9a-f]{32}\z/, 'a new set has an identity';
isnt $Set->create(fresh_dir())->identity, $set->identity, 'and each its own';
is_deeply [ $set->entries ], [], 'no dictionary yet';
is_deeply $set->fallback, { method => 'gzip', level => 9 }, 'the default fallback: what the clients write';
ok !-e $dir, 'nothing is written before write';

my $api = $set->add(prefix => 'api:', dictionary => $dict{api}, level => 9, savings => 61.25,
                    samples => 74, trained => 1700000000, held_out_items => 1234);
is $api->{id}, dictionary_id($dict{api}), 'the ID is the dictionary\'s own by default';
is $api->{file}, "api-$api->{id}.dict", 'the file is named after the prefix and the ID';
is $api->{trained}, '2023-11-14T22:13:20Z', 'dates are written in UTC';
my $npm = $set->add(prefix => 'npm:', dictionary => $dict{npm}, level => 3, id => 1);
is $npm->{id}, 1, 'a small ID is given';
is dictionary_id($set->dictionary_bytes(1)), 1, 'by rewriting the dictionary\'s header';
my $odd = $set->add(prefix => "app 1/\x{e9}:%", dictionary => $dict{gh}, level => 6, id => 300);
like $odd->{file}, qr/\Aapp_1-300\.dict\z/, 'a file name only of safe characters';
$set->set_fallback(method => 'zstd', level => 3, savings => 12.5, samples => 100, measured => 1700000000);
$set->write;
ok -f "$dir/manifest", 'write writes the manifest';
ok -f "$dir/$_->{file}", "and $_->{file}" for $set->entries;
is_deeply [ grep { /\.tmp-/ } glob("$dir/*") ], [], 'no temporary file left behind';

my $text = slurp("$dir/manifest");
like $text, qr/\Acmrx-dictionary-set 2 release=\Q$Cache::Memcached::RustXS::VERSION\E\n/,
    'the manifest starts with its format line and the release that wrote it';
like $text, qr/^decision seq=3 kind=train prefix=app%201\/%E9:%25 dictionary=300 made=\S+Z effective=\S+Z$/m,
    'one line a decision, in readable UTC';
like $text, qr/prefix=app%201\/%E9:%25 /, 'bytes outside printable ASCII, spaces and % are escaped';
like $text, qr/ held_out_items=1234\n/, 'other fields are kept';

my $read = $Set->read($dir);
is $read->identity, $set->identity, 'read back: the same identity';
is $read->format_version, 2, 'the format version';
is_deeply [ $read->entries ], [ $set->entries ], 'the same entries';
is_deeply $read->fallback, $set->fallback, 'the same fallback';
is $read->as_string, $text, 'and the same text when written again';
is_deeply [ $read->prefixes ], [ sort 'api:', 'npm:', "app 1/\x{e9}:%" ], 'the prefixes with a dictionary';
is $read->for_key('api:users:17')->{id}, $api->{id}, 'for_key: the prefix a key starts with';
is $read->for_key('npm'), undef, 'no prefix, no dictionary';
is $read->current('npm:')->{id}, 1, 'current: exactly the prefix';
ok eval { $read->verify; 1 }, 'every file matches the manifest' or diag $@;
is $read->dictionary_bytes($api->{id}), $dict{api}, 'dictionary_bytes: the file\'s bytes';

# ---- the zstd command decodes frames of a re-numbered dictionary -------------

SKIP: {
    skip 'the zstd command is not in PATH', 3 unless $HAVE_ZSTD;
    my $out = in_fresh_process(sub {
        load_dictionaries($dir);
        my $value = $values{npm}[5];
        my $frame = compress($value, level => 3, dictionary => 1);
        my $field = ord(substr $frame, 4, 1) & 3;
        my ($status, $plain) = run_filter($frame, 'zstd', '-q', '-d', '-c', '-D', $set->path_of(1));
        my ($status2, $theirs) = run_filter($value, 'zstd', '-q', '-c', '-D', $set->path_of(1));
        return join ',', $field, $status, ($plain eq $value ? 'same' : 'differs'),
            $status2, (decompress($theirs) // '') eq $value ? 'read' : 'unread';
    });
    my ($field, $status, $same, $status2, $read_back) = split /,/, $out;
    is $field, 1, 'a frame of dictionary 1 has a 1-byte dictionary ID field' or diag $out;
    is_deeply [ $status, $same ], [ 0, 'same' ], 'zstd -d -D FILE decodes it';
    is_deeply [ $status2, $read_back ], [ 0, 'read' ], 'and what zstd -D FILE writes, we read';
}

# ---- adding, retiring, removing ----------------------------------------------

{
    my $s = $Set->read($dir);
    my $old = $s->current('api:');
    my $new = $s->add(prefix => 'api:', dictionary => $dict{news}, level => 9, id => $s->unused_id);
    is $new->{id}, 2, 'unused_id: the smallest free ID';
    my %state = map { ($_->{entry}{id} => $_->{state}) } $s->schedule;
    is $state{ $old->{id} }, 'retired', 'the prefix\'s dictionary before is retired';
    is $s->current('api:')->{id}, 2, 'the new one is current';
    like error_of(sub { $s->remove(2) }), qr/current for prefix 'api:': retire it first/,
        'a current dictionary cannot be removed';
    like error_of(sub { $s->add(prefix => 'x:', dictionary => $dict{api}, level => 3, id => 2) }),
        qr/dictionary ID 2 is in the set already \(prefix 'api:', in the set\): two dictionaries with one ID are refused/,
        'two dictionaries with one ID are refused';
    like error_of(sub { $s->add(prefix => 'x:', dictionary => $dict{api}, level => 3) }),
        qr/dictionary ID $old->{id} is in the set already \(prefix 'api:', in the set\)/,
        'also when the one there is retired';
    my $before = $s->as_string;
    $s->write;
    $s->remove($old->{id});
    ok -f "$dir/$old->{file}", 'remove deletes nothing before write';
    $s->write;
    ok !-e "$dir/$old->{file}", 'write deletes the file of a removed dictionary';
    is scalar(() = $Set->read($dir)->entries), 3, 'and the manifest lists it no more';
    is_deeply [ map { [ $_->{id}, $_->{prefix} ] } $Set->read($dir)->removed ], [ [ $old->{id}, 'api:' ] ],
        'but keeps its ID, as removed';
    my $after = slurp("$dir/manifest");
    is substr($after, 0, length $before), $before, 'every line before kept byte for byte';
    like substr($after, length $before), qr/\Aremoved id=$old->{id} prefix=api: removed=\S+Z\n\z/,
        'the removal appended as a line';
    like $after, qr/^dictionary id=$old->{id} prefix=api: /m, 'and its dictionary line stays';
    like error_of(sub { $s->add(prefix => 'y:', dictionary => $dict{api}, level => 3) }),
        qr/dictionary ID $old->{id} is in the set already \(prefix 'api:', removed: values may still name it\)/,
        'a removed dictionary\'s ID is not given again';
    my $small = $Set->create(fresh_dir());
    $small->add(prefix => 'a:', dictionary => $dict{api}, level => 3, id => 1);
    $small->retire(1);
    $small->remove(1);
    is $small->unused_id, 2, 'unused_id skips the IDs of removed dictionaries';
    $s->retire(2);
    is $s->current('api:'), undef, 'retire: the prefix has no dictionary then';
    is $s->for_key('api:1'), undef, 'and its keys get the fallback';
    $s->write;
}

# Two writers of one folder: the second is told.
{
    my ($first, $second) = ($Set->read($dir), $Set->read($dir));
    $first->add(prefix => 'news:', dictionary => $dict{news}, level => 3, id => 77);
    $first->write;
    $second->add(prefix => 'gh:', dictionary => $dict{gh}, level => 3, id => 78);
    like error_of(sub { $second->write }), qr/changed since this set was read \(another writer\?\): read it again/,
        'a writer whose manifest is stale is refused';
    ok !$Set->read($dir)->entry(78), 'and writes nothing into it';
    like error_of(sub { $Set->create($dir) }), qr/holds a dictionary set already/,
        'create refuses a folder with a set';
}

# Refused options.
{
    my $s = $Set->create(fresh_dir());
    my %ok = (prefix => 'p:', dictionary => $dict{api}, level => 3);
    for my $case (
        [ { %ok, prefix => undef }, qr/prefix is needed/ ],
        [ { %ok, level => undef }, qr/level is needed/ ],
        [ { %ok, level => 23 }, qr/level must be a zstd level/ ],
        [ { %ok, dictionary => 'not a dictionary' }, qr/not a standard zstd dictionary/ ],
        [ { %ok, dictionary => substr($dict{api}, 0, 60) }, qr/not a zstd dictionary/ ],
        [ { %ok, id => 0 }, qr/id must be 1 to 4294967295/ ],
        [ { %ok, id => 2**32 }, qr/id must be 1 to 4294967295/ ],
        [ { %ok, savings => 'lots' }, qr/savings must be a percentage/ ],
        [ { %ok, samples => -1 }, qr/samples must be a count/ ],
        [ { %ok, trained => 'yesterday' }, qr/epoch seconds or YYYY-MM-DDTHH:MM:SSZ/ ],
        [ { %ok, Bad => 1 }, qr/unknown option Bad/ ],
        [ { %ok, prefix => "\x{263a}" }, qr/prefix must be bytes/ ],
    ) {
        my ($opt, $want) = @$case;
        like error_of(sub { $s->add(%$opt) }), $want, "add refuses: $want";
    }
    like error_of(sub { $s->set_fallback(method => 'lz4', level => 1) }), qr/must be zstd or gzip/,
        'set_fallback refuses an unknown method';
    like error_of(sub { $s->set_fallback(method => 'gzip', level => 13) }), qr/gzip level \(0 to 12\)/,
        'and a level its method does not have';
    is_deeply [ $s->entries ], [], 'nothing refused was added';
}

# ---- a manifest refused whole ----------------------------------------------

{
    my $good = slurp("$dir/manifest");
    my $bad = fresh_dir();
    mkdir $bad or die "$bad: $!";
    my (@accepted, @wrong);
    for my $len (0 .. length($good) - 1) {
        spew("$bad/manifest", substr $good, 0, $len);
        my $read = eval { $Set->read($bad) };
        # A cut at a line's end leaves an earlier log, which is read as
        # that; anywhere else it is refused.
        push @accepted, $len if $read && substr($good, $len - 1, 1) ne "\n";
        push @wrong, $len if $read && index($good, $read->as_string) != 0;
    }
    is_deeply \@accepted, [], 'a manifest cut short within a line is refused';
    is_deeply \@wrong, [], 'one cut at a line end reads as the log up to there';
    # $good with the first match of $re replaced by what $with returns.
    my $line = sub {
        my ($re, $with) = @_;
        my $t = $good;
        $t =~ s/$re/$with->()/me or die "no $re";
        return $t;
    };
    my ($api) = $good =~ /^dictionary id=(\d+) prefix=api: /m;
    my $next = 1 + (() = $good =~ /^decision /mg);
    my ($removed) = $good =~ /^removed id=(\d+) /m;
    my %cases = (
        'not a manifest'         => [ "hello\n", qr/line 1: not a dictionary set manifest/ ],
        'a newer format'         => [ $line->(qr/\Acmrx-dictionary-set 2 release=\S+/, sub { 'cmrx-dictionary-set 3 release=1.200' }),
                                      qr/line 1: format 3 needs Cache::Memcached::RustXS 1.200 or later/ ],
        'a newer format, no newer release named' => [ $line->(qr/\Acmrx-dictionary-set 2 release=\S+/, sub { 'cmrx-dictionary-set 3 release=0.9' }),
                                      qr/line 1: format 3 needs Cache::Memcached::RustXS newer than / ],
        'format 1'               => [ $line->(qr/\Acmrx-dictionary-set 2 release=\S+/, sub { 'cmrx-dictionary-set 1' }),
                                      qr/line 1: format 1 was written by a development version .*make a new set/ ],
        'one ID twice'           => [ $line->(qr/^(dictionary id=1 .*)$/m, sub { "$1\n$1" }),
                                      qr/dictionary ID 1 is listed twice .*two dictionaries with one ID are refused/ ],
        'a field cut off'        => [ $line->(qr/ sha256=[0-9a-f]+/, sub { '' }), qr/without its sha256/ ],
        'a file outside'         => [ $line->(qr/ file=npm-1\.dict/, sub { ' file=../npm-1.dict' }),
                                      qr/file must be a plain name inside the set's folder/ ],
        'a bad level'            => [ $line->(qr/ level=3 /, sub { ' level=99 ' }), qr/level must be a zstd level/ ],
        'CRLF line ends'         => [ do { (my $t = $good) =~ s/\n/\r\n/g; $t }, qr/line \d+: / ],
        'effective before made'  => [ $line->(qr/^(decision seq=2 .* made=)(\S+) effective=\S+$/m,
                                              sub { "${1}2026-06-01T00:00:10Z effective=2026-06-01T00:00:00Z" }),
                                      qr/line \d+: effective 2026-06-01T00:00:00Z is before made 2026-06-01T00:00:10Z/ ],
        'a missing dictionary'   => [ $line->(qr/^(decision seq=2 .*) dictionary=\d+/m, sub { "$1 dictionary=4242" }),
                                      qr/line \d+: dictionary '4242' is on no dictionary line before it/ ],
        'another prefix\'s'      => [ $line->(qr/^(decision seq=2 .*) dictionary=\d+/m, sub { "$1 dictionary=$api" }),
                                      qr/line \d+: dictionary $api is of the prefix 'api:', not 'npm:'/ ],
        'a seq repeated'         => [ $line->(qr/^decision seq=3 /m, sub { 'decision seq=2 ' }),
                                      qr/line \d+: seq '2', where seq 3 is next: a seq repeated, out of order or missing/ ],
        'times going back'       => [ $line->(qr/^(decision seq=3 .* made=)\S+ effective=\S+$/m,
                                              sub { "${1}2000-01-01T00:00:00Z effective=2000-01-01T00:00:00Z" }),
                                      qr/line \d+: time order: made 2000-01-01T00:00:00Z is earlier than line \d+'s/ ],
        'removal of the current' => [ "${good}removed id=1 prefix=npm: removed=2099-01-01T00:00:00Z\n",
                                      qr/line \d+: dictionary 1 is removed while the writers of its prefix use it/ ],
        'a decision after removal' => [ "${good}decision seq=$next kind=rollback prefix=api: dictionary=$removed "
                                        . "made=2099-01-01T00:00:00Z effective=2099-01-01T00:00:00Z\n",
                                        qr/line \d+: dictionary $removed was removed at line \d+/ ],
    );
    for my $name (sort keys %cases) {
        my ($text, $want) = @{ $cases{$name} };
        spew("$bad/manifest", $text);
        like error_of(sub { $Set->read($bad) }), qr/\Q$bad\E\/manifest: .*$want.*refused, nothing changed/s,
            "refused: $name";
    }
    spew("$bad/manifest", $good . "frobnicate x=1\n");
    ok eval { $Set->read($bad) }, 'a line kind a later release adds is skipped';
    spew("$bad/manifest", $line->(qr/^(decision seq=1 .*)$/m, sub { "$1 why=later" }));
    ok eval { $Set->read($bad) }, 'and so is a field it adds';
    like error_of(sub { $Set->read(fresh_dir()) }), qr/is not a dictionary set: cannot read/,
        'a folder without a manifest is not a set';
}

# ---- load_dictionaries: everything checked before anything is loaded -------

# A copy of the set in $dir with $mangle applied to it; returns its folder.
sub mangled_copy {
    my ($mangle) = @_;
    my $copy = fresh_dir();
    mkdir $copy or die "$copy: $!";
    spew("$copy/" . (m{([^/]+)\z})[0], slurp($_)) for grep { -f } glob("$dir/*");
    $mangle->($copy);
    return $copy;
}

{
    my $s = $Set->read($dir);
    my ($file) = map { $_->{file} } grep { $_->{id} == 1 } $s->entries;
    my $other = $Set->create(fresh_dir());
    $other->add(prefix => 'npm:', dictionary => $dict{gh}, level => 3, id => 1);
    $other->write;
    my %cases = (
        'a truncated dictionary file' => [ sub { my $path = "$_[0]/$file"; spew($path, substr slurp($path), 0, 1000) },
                                           qr/1000 bytes, the manifest says \d+: not the file of dictionary 1/ ],
        'a replaced dictionary file'  => [ sub { my $path = "$_[0]/$file"; my $bytes = slurp($path); substr($bytes, -1, 1) ^= "\x01"; spew($path, $bytes) },
                                           qr/its SHA-256 differs from the manifest's: not the file of dictionary 1/ ],
        'another set\'s file'         => [ sub { spew("$_[0]/$file", slurp($other->path_of(1))) },
                                           qr/not the file of dictionary 1 \(prefix 'npm:'\) that the manifest lists \(truncated, replaced, or of another set\)/ ],
        'a missing file'              => [ sub { unlink "$_[0]/$file" or die $! }, qr/cannot read dictionary 1/ ],
        'a truncated manifest'        => [ sub { my $path = "$_[0]/manifest"; my $text = slurp($path); spew($path, substr $text, 0, length($text) - 30) },
                                           qr/manifest: truncated|line \d+: .*truncated/ ],
    );
    for my $name (sort keys %cases) {
        my ($mangle, $want) = @{ $cases{$name} };
        my $copy = mangled_copy($mangle);
        my $out = in_fresh_process(sub {
            my $err = error_of(sub { load_dictionaries($copy) });
            my @loaded = grep { Cache::Memcached::RustXS::Zstd::_loaded_state($_->{id}, '') ne 'not_loaded' }
                         $s->entries;
            return join "\n", $err, scalar @loaded;
        });
        my ($err, $loaded) = $out =~ /\A(.*)\n(\d+)\z/s ? ($1, $2) : ($out, -1);
        like $err, qr/\Aload_dictionaries: .*$want/s, "load_dictionaries refuses $name";
        is $loaded, 0, "and loads none of the set's dictionaries";
    }

    # A different dictionary with an ID of the set, loaded before.
    my $out = in_fresh_process(sub {
        load_dictionaries($other->dir);
        my $err = error_of(sub { load_dictionaries($dir) });
        return $err;
    });
    like $out, qr/dictionary ID 1 of .* is taken by another dictionary loaded in this process/,
        'a set whose ID another loaded set has is refused';
    $out = in_fresh_process(sub {
        load_dictionaries($other->dir);
        my $s2 = $Set->create(fresh_dir() . "-x");
        my $e = error_of(sub { $s2->add(prefix => 'p:', dictionary => $dict{api}, level => 3, id => 1) });
        return join "\n", $e, $s2->unused_id;
    });
    like $out, qr/a different dictionary with ID 1 is loaded in this process/,
        'add refuses an ID a different loaded dictionary has';
    like $out, qr/\n2\z/, 'and unused_id skips it';
}

# ---- the readers find dictionaries added later -----------------------------

{
    my $live = fresh_dir();
    my $s = $Set->create($live);
    $s->add(prefix => 'api:', dictionary => $dict{api}, level => 9, id => 10);
    $s->write;
    # A frame of a dictionary the set does not have yet, made elsewhere.
    my $later = dictionary_with_id($dict{npm}, 11);
    my $frame = in_fresh_process(sub {
        my $path = "$TMP/later.dict";
        spew($path, $later);
        load_dictionary($path);
        return compress($values{npm}[3], level => 3, dictionary => 11);
    });
    my $out = in_fresh_process(sub {
        my ($warnings) = @_;
        # The sets' clock, moved by hand: the rescan is due 0.5 s after the
        # load, and only then.
        my $now = Time::HiRes::time();
        no warnings 'once';
        local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
        load_dictionaries($live, rescan_interval => 0.5);
        my @seen;
        push @seen, defined(decompress($frame)) ? 'hit' : 'miss';
        push @seen, scalar @$warnings;    # no warning: a scan is still due
        my $s2 = $Set->read($live);
        $s2->add(prefix => 'npm:', dictionary => $later, level => 3);
        $s2->write;
        push @seen, defined(decompress($frame)) ? 'hit' : 'miss';    # not yet: the interval
        $now += 0.45;
        push @seen, defined(decompress($frame)) ? 'hit' : 'miss';    # still not
        $now += 0.05;
        my $got = decompress($frame);
        push @seen, defined $got && $got eq $values{npm}[3] ? 'hit' : 'miss';
        push @seen, scalar @$warnings;
        return join ',', @seen;
    });
    my ($first, $warned, $early, $just_before, $later_hit, $warned_after) = split /,/, $out;
    is $first, 'miss', 'a frame of a dictionary not in the set is a miss' or diag $out;
    is $warned, 0, 'and no warning while the set is due for a scan';
    is $early, 'miss', 'the set is not read again before its interval';
    is $just_before, 'miss', '... nor 0.45 s after the load (the interval is 0.5 s)';
    is $later_hit, 'hit', 'at the interval, the dictionary added to the set decodes the value';
    is $warned_after, 0, 'no warning was given';

    # Still unknown after a scan: one warning per ID, not per value.
    $out = in_fresh_process(sub {
        my ($warnings) = @_;
        load_dictionaries($live, rescan_interval => 0);
        my $bad = $frame;
        substr($bad, 5, 1) = chr 99;    # names dictionary 99
        my @outcomes = map { defined(decompress($bad)) ? 'hit' : 'miss' } 1 .. 3;
        return join ',', @outcomes, scalar(@$warnings), map { /dictionary (\d+) is not loaded/ ? $1 : '?' } @$warnings;
    });
    is $out, 'miss,miss,miss,1,99', 'an ID still unknown after a scan: a miss and one warning';

    # Another set's manifest put in the folder: refused, with one warning.
    my $other = $Set->create(fresh_dir());
    $other->add(prefix => 'gh:', dictionary => $dict{gh}, level => 3, id => 12);
    $other->write;
    my $gh_frame = compress_elsewhere(slurp($other->path_of(12)), $values{gh}[0]);
    $out = in_fresh_process(sub {
        my ($warnings) = @_;
        load_dictionaries($live, rescan_interval => 0);
        spew("$live/$_->{file}", slurp($other->path_of($_->{id}))) for $other->entries;
        spew("$live/manifest.new", slurp($other->dir . '/manifest'));
        rename "$live/manifest", "$live/manifest.saved" or die $!;
        rename "$live/manifest.new", "$live/manifest" or die $!;
        my @outcomes = map { defined(decompress($gh_frame)) ? 'hit' : 'miss' } 1 .. 3;
        my $again = error_of(sub { load_dictionaries($live) });
        rename "$live/manifest.saved", "$live/manifest" or die $!;
        return join "\n", join(',', @outcomes), $again, @$warnings;
    });
    my ($hits, $again, @w) = split /\n/, $out;
    is $hits, 'miss,miss,miss', 'the values of another set put in the folder stay misses' or diag $out;
    like $again, qr/now holds another dictionary set/, 'load_dictionaries of the folder again refuses it';
    ok scalar(grep { /now holds another dictionary set \(identity [0-9a-f]{32}, loaded before: [0-9a-f]{32}\); not mixing the two/ } @w),
        'with a warning that the folder holds another set';
    is scalar(grep { /rescanning the dictionary set/ } @w), 1, 'said once, not per value';
}

# A frame made in another process with the dictionary $bytes.
sub compress_elsewhere {
    my ($bytes, $value) = @_;
    return in_fresh_process(sub {
        my $path = "$TMP/elsewhere-" . $$ . '.dict';
        spew($path, $bytes);
        load_dictionary($path);
        return compress($value, level => 3, dictionary => dictionary_id($bytes));
    });
}

# ---- the rescan's perl code: dying, re-entering, warning ------------------

{
    my $live = fresh_dir();
    my $s = $Set->create($live);
    $s->add(prefix => 'api:', dictionary => $dict{api}, level => 3, id => 20);
    $s->write;
    my $frame = compress_elsewhere(dictionary_with_id($dict{gh}, 21), $values{gh}[1]);
    my $out = in_fresh_process(sub {
        my ($warnings) = @_;
        load_dictionaries($live, rescan_interval => 0);
        my @outcomes;
        no warnings 'redefine';
        my $real = \&Cache::Memcached::RustXS::Zstd::_rescan_for;
        # It dies: a miss, $@ as it was.
        local *Cache::Memcached::RustXS::Zstd::_rescan_for = sub { die "rescan died\n" };
        $@ = 'kept';
        push @outcomes, defined(decompress($frame)) ? 'hit' : 'miss', $@;
        # Its scan decodes a value itself (re-entering the reader): that
        # reader gets no rescan of its own (else this would not end).
        {
            my $inner;
            local *Cache::Memcached::RustXS::Zstd::_rescan_if_due = sub { $inner = decompress($frame); 1 };
            push @outcomes, defined(decompress($frame)) ? 'hit' : 'miss';
        }
        # It changes the reader's input: the reader decodes what it was given.
        my $input = $frame;
        local *Cache::Memcached::RustXS::Zstd::_rescan_for = sub {
            $input = 'x' x 100;
            $s->add(prefix => 'gh:', dictionary => dictionary_with_id($dict{gh}, 21), level => 3);
            $s->write;
            $real->(@_);
        };
        my $methods = compress_methods(level => 3);
        my $plain;
        push @outcomes, $methods->[1]->(\$input, \$plain) ? ($plain eq $values{gh}[1] ? 'hit' : 'wrong') : 'miss';
        return join ',', @outcomes, scalar @$warnings;
    });
    is $out, 'miss,kept,miss,hit,1',
        'a rescan that dies or re-enters is a miss (one warning), leaves $@ alone; one that changes the input does not change what is decoded';
}

SKIP: {
    skip leaktrace_missing(), 1 if leaktrace_missing();
    my $live = fresh_dir();
    my $s = $Set->create($live);
    $s->add(prefix => 'api:', dictionary => $dict{api}, level => 3, id => 30);
    $s->write;
    my $frame = compress_elsewhere(dictionary_with_id($dict{gh}, 31), $values{gh}[2]);
    my $out = in_fresh_process(sub {
        load_dictionaries($live, rescan_interval => 0);
        my $methods = compress_methods(level => 3);
        my $round = sub {
            for (1 .. 20) {
                no warnings 'redefine';
                local *Cache::Memcached::RustXS::Zstd::_rescan_for = sub { die "x\n" } if $_ % 2;
                my $plain;
                decompress($frame);
                $methods->[1]->(\$frame, \$plain);
            }
        };
        return leaked_svs($round);    # (after the one warning of the ID, the caches filled)
    });
    is $out, 0, 'a reader whose rescan dies or finds nothing leaks nothing';
}

# A set whose manifest becomes unreadable while a process runs: it keeps
# what it loaded (its writer writes with it), warns once per
# $WarnInterval, and counts each rescan that failed.
{
    my $live = fresh_dir();
    my $s = $Set->create($live);
    $s->add(prefix => 'api:', dictionary => $dict{api}, level => 3, id => 40);
    $s->write;
    my $good = slurp("$live/manifest");
    my $out = in_fresh_process(sub {
        my ($warnings) = @_;
        my $now = 2_000_000_000;
        no warnings 'once';
        local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
        load_dictionaries($live, rescan_interval => 10);
        my $writer = compress_methods(dictionaries => $live, prefix => 'api:', rescan_interval => 10);
        my $write = sub {
            my ($in, $frame) = ($values{api}[0], '');
            $writer->[0]->(\$in, \$frame) or return 'declined';
            my $back = '';
            return frame_dictionary_id($frame) . ($writer->[1]->(\$frame, \$back) && $back eq $in ? '' : ' unreadable');
        };
        # Effective before made: a log that cannot be true.
        (my $bad = $good) =~ s/^(decision seq=1 .* made=)(\S+) effective=\S+$/${1}$2 effective=2000-01-01T00:00:00Z/m
            or die "no decision line\n";
        spew("$live/manifest", $bad);
        my @seen;
        for my $step (11, 11, 11, 60) {
            $now += $step;
            push @seen, join ':', $write->(), Cache::Memcached::RustXS::Zstd::counters()->{sets}{unreadable_rescans},
                                  scalar @$warnings;
        }
        spew("$live/manifest", $good);
        $now += 11;
        push @seen, join ':', $write->(), Cache::Memcached::RustXS::Zstd::counters()->{sets}{unreadable_rescans},
                              scalar @$warnings;
        return join "\n", join(',', @seen), @$warnings;
    });
    my ($seen, $warning) = split /\n/, $out;
    is $seen, '40:1:1,40:2:1,40:3:1,40:4:2,40:4:2',
        'a set that becomes unreadable: the writer keeps its dictionary, each failed rescan is counted, '
      . 'one warning per interval; read again once it is whole' or diag $out;
    like $warning, qr/rescanning the dictionary set in \Q$live\E: \Q$live\E\/manifest: line \d+: effective 2000-01-01T00:00:00Z is before made .*the dictionaries loaded before stay/,
        '... the warning names the line and the check';
}

is_deeply \@WARNINGS, [], 'no warning in this process';

done_testing;
