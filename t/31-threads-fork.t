#!/usr/bin/perl
# ithreads and fork with the XS objects alive.
#
# The thread tests run in a child perl (this file again, with
# --thread-child), whose TAP is read through a pipe and replayed here one
# assertion per child assertion; on top of that this process asserts that
# the child exited 0 with its whole plan run. A double free or a crash at a
# join, at thread exit or in global destruction shows up as a signal or a
# non-zero status instead of taking the test file down with it.
#
# The fork tests run here: a child made by fork uses a parser and the codec
# state made before the fork, and reports through its exit status and a pipe.
use strict;
use warnings;

use Config;
our $THREAD_CHILD;
BEGIN {
    $THREAD_CHILD = @ARGV && $ARGV[0] eq '--thread-child';
    if (!$Config{useithreads}) {
        print "1..0 # SKIP this perl has no ithreads (useithreads undef)\n";
        exit 0;
    }
    if ($THREAD_CHILD) {    # before Test::More, as threads wants
        require threads;
        threads->import;
    }
}

use lib 't/lib';
use Compress::Zlib ();
use POSIX ();
use Time::HiRes qw(time);
use Test::More;

use Cache::Memcached::RustXS::GetParser;
use Cache::Memcached::RustXS::Zlib ();
use CMRXTest::Clients qw(cache_memcached_missing);
use CMRXTest::Protocol qw(value_item finalizer);

my $CLASS = 'Cache::Memcached::RustXS::GetParser';

# ---- shared helpers -------------------------------------------------------------

# Socket pairs non-blocking at both ends: pump writes while a parser reads.
sub pair { CMRXTest::Protocol::pair(nonblocking_writer => 1) }

# Write all of $data to a non-blocking writer while a parser drains the
# reader; returns the parser's last result.
sub pump {
    my ($p, $r, $w, $data) = @_;
    my ($off, $rv, $spins) = (0, 0, 0);
    while ($off < length $data) {
        my $put = syswrite $w, $data, 65536, $off;
        $off += $put if $put;
        $rv = $p->parse_from_sock($r);
        last if $rv != 0 || ++$spins > 1_000_000;
    }
    return $rv;
}

# A good response with a gzip'd value: what a parser made anywhere must read.
my $WORDS = join ' ', map { "word$_" } 1 .. 300;
my $RESP  = value_item('a', 0, 'alpha') . value_item('g', 2, Compress::Zlib::memGzip($WORDS))
          . value_item('b', 1, "bin\0ary\r\nEND\r\n") . "END\r\n";
my %RESP_WANT  = (a => "alpha\r\n", g => "$WORDS\r\n", b => "bin\0ary\r\nEND\r\n\r\n");
my %RESP_FLAGS = (a => 0, g => 0, b => 1);

sub fresh_parse_ok {    # a new parser here and now parses $RESP right
    my (%dest, %seen);
    my $p = $CLASS->new(\%dest, 0, sub { %seen = (%seen, %{ $_[0] }) });
    my $rv = $p->parse_from_string($RESP);
    return $rv == 1 && keys(%dest) == 3
        && !grep({ $dest{$_} ne $RESP_WANT{$_} || $seen{$_} != $RESP_FLAGS{$_} }
                 keys %RESP_WANT);
}

if ($THREAD_CHILD) {
    thread_child();
    exit 0;    # not reached
}

# =====================================================================================
# Parent: run the thread part in a child perl, replay its results.

{
    my $mc = eval {
        require CMRXTest::Memcached;
        CMRXTest::Memcached->start;
    };
    my $mc_error = $@;
    if (!$mc && CMRXTest::Memcached->required) {
        fail "memcached is required here (CMRX_REQUIRE_MEMCACHED) but: $mc_error";
    }
    local $ENV{CMRX_T31_MEMCACHED} = $mc ? $mc->address : '';
    (my $why = $mc_error) =~ s/\s+\z//;
    local $ENV{CMRX_T31_NO_MEMCACHED} = $mc ? '' : $why;

    my $t0 = time;
    my @inc = map { "-I$_" } grep { !ref } @INC;
    my $pid = open my $tap, '-|';
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        { exec { $^X } $^X, @inc, $0, '--thread-child' }    # block: no warning
        print "Bail out! exec $^X failed: $!\n";
        POSIX::_exit(127);
    }
    my $tb = Test::More->builder;
    my ($plan, $seen) = (undef, 0);
    while (my $line = <$tap>) {
        chomp $line;
        if ($line =~ /\A1\.\.(\d+)/) { $plan = $1; next }
        if ($line =~ /\A(not )?ok \d+(?: - (.*?))?(?: # (TODO|SKIP)\b\s*(.*))?\z/i) {
            my ($not, $name, $directive, $reason) = ($1, $2 // '', $3 // '', $4 // '');
            $seen++;
            $directive = uc $directive;
            if ($directive eq 'SKIP') { $tb->skip("threads: $reason"); next }
            $tb->todo_start($reason) if $directive eq 'TODO';
            $tb->ok(!$not, "threads: $name");
            $tb->todo_end if $directive eq 'TODO';
            next;
        }
        next if $line =~ /\A\s*\z/;
        print "$line\n";    # comments (note) and subtest lines: pass through
    }
    close $tap;
    my $status = $?;
    is $status, 0, sprintf('thread child exited cleanly (status %d, signal %d)',
                           $status >> 8, $status & 127);
    ok defined $plan && $plan > 0 && $seen == $plan,
        "thread child ran its whole plan ($seen of " . ($plan // 'no plan') . ')';
    note sprintf 'thread part took %.1f s', time - $t0;
}

# =====================================================================================
# Fork: a child uses a parser (and the codec) made before the fork.

{
    my ($r, $w) = pair();
    my (%dest, %seen);
    my $p = $CLASS->new(\%dest, 3, finalizer(\%dest, \%seen, gunzip => 1));
    my $gz   = Compress::Zlib::memGzip($WORDS);
    my $resp = value_item('ns:first', 0, 'one') . value_item('ns:gz', 2, $gz)
             . value_item('ns:last', 0, 'zzz') . "END\r\n";
    my $cut  = index($resp, 'VALUE ns:gz') + 30;    # inside the gzip data
    syswrite($w, substr($resp, 0, $cut)) == $cut or die "syswrite: $!";
    is $p->parse_from_sock($r), 0, 'fork: parser mid-value before the fork';
    is $p->current_key, 'gz', 'fork: value gz in progress';
    my $z_pre = Cache::Memcached::RustXS::Zlib::memGzip($WORDS);    # codec state made

    pipe(my $from_child, my $to_parent) or die "pipe: $!";
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        close $from_child;
        my @bad;
        # The child finishes the response with its copy of the parser.
        syswrite($w, substr($resp, $cut)) or push @bad, "write: $!";
        my $rv = 0;
        for (1 .. 100) {
            $rv = $p->parse_from_sock($r);
            last if $rv;
            select undef, undef, undef, 0.01;
        }
        push @bad, "rv $rv" unless $rv == 1;
        push @bad, 'values' unless ($dest{first} // '') eq 'one'
            && ($dest{gz} // '') eq $WORDS && ($dest{last} // '') eq 'zzz';
        push @bad, 'flags' unless ($seen{gz} // -1) == 0;
        # The codec: state made in the parent, used here.
        for my $n (1 .. 200) {
            my $data = join ',', map { $_ * $n } 1 .. $n;
            my $gzd  = Cache::Memcached::RustXS::Zlib::memGzip($data);
            my $copy = $gzd;
            push @bad, "gzip $n" unless Compress::Zlib::memGunzip($copy) eq $data
                && Cache::Memcached::RustXS::Zlib::memGunzip($gzd) eq $data;
            my $z = Cache::Memcached::RustXS::Zlib::compress($data);
            push @bad, "zlib $n" unless Compress::Zlib::uncompress($z) eq $data;
        }
        push @bad, 'pre-fork gzip' unless
            Cache::Memcached::RustXS::Zlib::memGunzip($z_pre) eq $WORDS;
        undef $p;    # the copy is freed in the child too
        print {$to_parent} @bad ? "bad: @bad[0 .. ($#bad < 4 ? $#bad : 4)]\n"
                                : "child ok\n";
        close $to_parent;
        POSIX::_exit(@bad ? 1 : 0);    # no END blocks, no Test::More ending
    }
    close $to_parent;
    my $report = do { local $/; <$from_child> };
    waitpid $pid, 0;
    is $?, 0, 'fork: child exited 0';
    is $report, "child ok\n", 'fork: child finished the response with the '
        . 'pre-fork parser and used the codec correctly';

    # Back in the parent: its parser still has its own half response.
    is_deeply \%dest, { first => 'one' }, 'fork: parent sees only its own values';
    is $p->current_key, 'gz', 'fork: parent parser still mid-value';
    syswrite($w, substr($resp, $cut)) or die "syswrite: $!";
    my $rv = 0;
    for (1 .. 100) {
        $rv = $p->parse_from_sock($r);
        last if $rv;
        select undef, undef, undef, 0.01;
    }
    is $rv, 1, 'fork: parent parser completes after the child exited';
    is_deeply \%dest, { first => 'one', gz => $WORDS, last => 'zzz' },
        'fork: parent values right';
    is_deeply \%seen, { first => 0, gz => 0, last => 0 },
        'fork: gz arrived gunzipped (flag 2 cleared)';
    ok fresh_parse_ok(), 'fork: a new parser in the parent works';
    is Cache::Memcached::RustXS::Zlib::memGunzip($z_pre), $WORDS,
        'fork: codec in the parent still works';
}

done_testing;
exit 0;

# =====================================================================================
# The thread child (a separate perl; plain Test::More on its stdout).

sub thread_child {
    my $rounds = 20;

    # ---- parsers with pending state survive 20 thread create/join rounds ------

    my (%d1, %s1, %d2, %s2, %d3, %s3, %d4, %s4, %d5, %s5);
    my $p1 = $CLASS->new(\%d1, 0, finalizer(\%d1, \%s1, gunzip => 1));
    my $p2 = $CLASS->new(\%d2, 0, finalizer(\%d2, \%s2, gunzip => 1));
    my $p3 = $CLASS->new(\%d3, 0, finalizer(\%d3, \%s3, gunzip => 1));
    my $p4 = $CLASS->new(\%d4, 0, finalizer(\%d4, \%s4, gunzip => 1));
    my $p5 = $CLASS->new(\%d5, 0, finalizer(\%d5, \%s5, gunzip => 1));
    my $big = join '', map { sprintf '%09d\n', $_ } 1 .. 20_000;    # 220 000 B
    my $big_resp = value_item('big', 0, $big) . "END\r\n";
    my $big_cut  = 120_000;
    my $gz = Compress::Zlib::memGzip($WORDS);
    my $gz_resp = value_item('gz', 2, $gz) . "END\r\n";
    my $gz_cut  = 40;
    my ($r3, $w3) = pair();

    is $p1->parse_from_string("VALUE k1 0 10\r\nhello"), 0, 'p1: half a value';
    is $p2->parse_from_string(value_item('k2', 0, 'abcde') . 'VALUE k'), 0,
        'p2: a value done, half a line';
    is pump($p3, $r3, $w3, substr($big_resp, 0, $big_cut)), 0,
        'p3: half of a 220 kB value through a socket';
    is $p4->parse_from_string(substr $gz_resp, 0, $gz_cut), 0, 'p4: half a gzip value';
    is $p5->parse_from_string('VALUE k5 0 3'), 0, 'p5: a line without CRLF';
    # Bytes left in the socket across the joins: only p3's owner may read them.
    my $pending = substr($big_resp, $big_cut, 1000);
    syswrite($w3, $pending) == 1000 or die "syswrite: $!";
    my @parsers = ($p1, $p2, $p3, $p4, $p5);

    my (@croaks, @fresh, @errors);
    for my $round (1 .. $rounds) {
        my $thr = threads->create({ context => 'list' }, sub {
            my @msgs;
            # Every method on every copy must croak, and read nothing.
            for my $p (@parsers) {
                push @msgs, eval { $p->parse_from_string("END\r\n"); 'no croak' } // $@;
                push @msgs, eval { $p->current_key; 'no croak' } // $@;
            }
            push @msgs, eval { $p3->parse_from_sock($r3); 'no croak' } // $@;
            my $fresh = fresh_parse_ok() ? 1 : 0;
            # Odd rounds free the copies explicitly, even rounds at thread exit.
            @parsers = () if $round % 2;
            undef $p1 if $round % 2;
            return ($fresh, @msgs);
        });
        my ($fresh, @msgs) = $thr->join;
        push @fresh, $fresh // 0;
        push @croaks, @msgs;
        push @errors, $thr->error if defined $thr->error;
    }
    is scalar(@errors), 0, "$rounds threads created and joined, none died"
        or diag "@errors";
    is scalar(grep { $_ } @fresh), $rounds,
        'a GetParser created inside each thread parses a response right there';
    my @not = grep { !/object belongs to another thread/ } @croaks;
    is scalar(@croaks), $rounds * 11, 'every copy used in a thread was tried';
    is scalar(@not), 0, 'each use of a copy croaked with "... another thread"'
        or diag explain [ @not[0 .. ($#not < 3 ? $#not : 3)] ];
    like $croaks[0] // '', qr/\ACache::Memcached::RustXS::GetParser: object belongs to another thread at /,
        'the croak message';

    # After the joins the parent's parsers finish their responses.
    is $p1->parse_from_string("world\r\nEND\r\n"), 1, 'p1 completes after the joins';
    is_deeply [ \%d1, \%s1 ], [ { k1 => 'helloworld' }, { k1 => 0 } ], 'p1 values';
    is $p2->parse_from_string("3 4 3\r\nxyz\r\nEND\r\n"), 1, 'p2 completes';
    is_deeply [ \%d2, \%s2 ], [ { k2 => 'abcde', k3 => 'xyz' }, { k2 => 0, k3 => 4 } ],
        'p2 values';
    is $p3->parse_from_sock($r3), 0, 'p3 reads the bytes left in the socket';
    is pump($p3, $r3, $w3, substr($big_resp, $big_cut + 1000)), 1, 'p3 completes';
    ok $d3{big} eq $big, 'p3: the 220 kB value is intact (no byte read by a thread)';
    is $p4->parse_from_string(substr $gz_resp, $gz_cut), 1, 'p4 completes';
    is_deeply [ \%d4, \%s4 ], [ { gz => $WORDS }, { gz => 0 } ],
        'p4: the value gunzipped in the parser';
    is $p5->parse_from_string("\r\nabc\r\nEND\r\n"), 1, 'p5 completes';
    is_deeply \%d5, { k5 => 'abc' }, 'p5 value';
    is $p1->current_key, undef, 'current_key works after the joins';

    # ---- the codec from 4 threads at once ---------------------------------------

    {
        my @levels = (1, 6, 9, 12);
        pipe(my $gate_r, my $gate_w) or die "pipe: $!";
        my @thr = map {
            my $i = $_;
            threads->create({ context => 'list' },
                            sub { codec_thread($i, $levels[$i], $gate_r) });
        } 0 .. $#levels;
        syswrite $gate_w, 'g' x @thr;    # start them together
        my @res = map { [ $_->join ] } @thr;
        for my $i (0 .. $#levels) {
            my ($n, $bad, $size, $level_seen) = @{ $res[$i] };
            is $n, 2000, "codec thread $i (Level $levels[$i]): 2000 round trips";
            is $bad, '', "codec thread $i: memGzip/memGunzip and compress/uncompress "
                . 'right, checked against Compress::Zlib in the thread';
            is $level_seen, $levels[$i], "codec thread $i: its local \$Level held";
        }
        my %size = map { $levels[$_] => $res[$_][2] // 0 } 0 .. $#levels;
        ok $size{1} > $size{12},
            "each thread compressed at its own level (L1 $size{1} B > L12 $size{12} B)";
        ok fresh_parse_ok() && Cache::Memcached::RustXS::Zlib::memGunzip(
               Cache::Memcached::RustXS::Zlib::memGzip($WORDS)) eq $WORDS,
            'parser and codec still fine in the main thread';
    }

    # ---- compress_methods XSUBs made in the main thread, called in threads --------
    {
        # The level and the output cap ride in each XSUB's CvXSUBANY; the
        # clones in the threads must carry them.
        my $methods = Cache::Memcached::RustXS::Zlib::compress_methods(
            level => 1, max_output => 100_000);
        my ($c, $d) = @$methods;
        my $text = join ' ', map { 'w' . ($_ * $_ % 977) } 1 .. 3000;
        my $main_gz;
        $c->(\$text, \$main_gz) or die 'compress method failed';
        my $over = Compress::Zlib::memGzip('x' x 200_000);
        my $jpeg = "\xFF\xD8\xFF\xE0\0\x10JFIF\0" . ('j' x 5000);
        my @thr = map {
            threads->create({ context => 'scalar' }, sub {
                my @bad;
                for my $n (1 .. 200) {
                    my ($gz, $back, $big, $raw);
                    push @bad, "c$n" unless $c->(\$text, \$gz) && $gz eq $main_gz;
                    push @bad, "d$n" unless $d->(\$gz, \$back) && $back eq $text;
                    push @bad, "cap$n" if $d->(\$over, \$big);
                    push @bad, "jpeg$n" if $c->(\$jpeg, \$raw);
                    last if @bad;
                }
                return "@bad";
            });
        } 1 .. 4;
        my @bad = map { $_->join // 'died' } @thr;
        is_deeply \@bad, [ ('') x 4 ], 'compress_methods made in the main thread '
            . 'work in 4 threads at once: same level-1 output, cap and JPEG sniff kept';
    }

    # ---- each thread's codec state is freed when the thread ends --------------------

    SKIP: {
        skip 'no /proc/self/status: cannot measure RSS', 2
            unless defined rss_kb();
        # Every level's compressor (levels 10-12 are the big near-optimal
        # ones) plus the decompressor: about 7 MB per thread that uses them
        # all. If the per-thread state outlived its thread, 20 threads
        # would leave ~150 MB behind; a 20 MB tolerance leaves room for
        # allocator noise (arenas, a stranded page or two per clone).
        my $text = join ' ', map { 'w' . ($_ * $_ % 977) } 1 .. 20_000;
        my $body = sub {
            my $n = 0;
            for my $level (0 .. 12) {
                local $Cache::Memcached::RustXS::Zlib::Level = $level;
                my $gz = Cache::Memcached::RustXS::Zlib::memGzip($text);
                $n++ if Cache::Memcached::RustXS::Zlib::memGunzip($gz) eq $text;
                my $z = Cache::Memcached::RustXS::Zlib::compress($text, $level % 10);
                $n++ if Cache::Memcached::RustXS::Zlib::uncompress($z) eq $text;
            }
            return $n;
        };
        threads->create({ context => 'scalar' }, $body)->join for 1 .. 3;  # warm-up
        my $before = rss_kb();
        my $right = 0;
        $right += threads->create({ context => 'scalar' }, $body)->join // 0
            for 1 .. 20;
        my $growth = rss_kb() - $before;
        is $right, 20 * 26, '20 threads used every level of the codec, all right';
        cmp_ok $growth, '<', 20 * 1024,
            "RSS grew $growth kB over 20 threads (< 20 MB): per-thread codec "
            . 'state freed at thread exit';
    }

    # ---- Cache::Memcached with our parser_class, a client per thread ---------------

    SKIP: {
        my $addr = $ENV{CMRX_T31_MEMCACHED};
        skip 'no memcached: ' . ($ENV{CMRX_T31_NO_MEMCACHED} // 'not given'), 9
            unless $addr;
        skip cache_memcached_missing(), 9 if cache_memcached_missing();
        my @thr = map {
            my $i = $_;
            threads->create({ context => 'list' },
                            sub { memcached_thread($i, $addr) });
        } 0 .. 3;
        my @res = map { [ $_->join ] } @thr;
        for my $i (0 .. 3) {
            my ($rounds_ok, $bad) = @{ $res[$i] };
            is $bad // 'died', '', "memcached thread $i: every get_multi right";
            is $rounds_ok, 10, "memcached thread $i: 10 get_multi rounds";
        }
        # And the main thread reads what the threads wrote.
        my $memd = Cache::Memcached->new({
            servers => [$addr], select_timeout => 5,
            parser_class => $CLASS,
        });
        my $got = $memd->get_multi(map { "t$_:k7" } 0 .. 3);
        is_deeply $got, { map { ("t$_:k7" => expected_value($_, 7)) } 0 .. 3 },
            'main thread reads the values the threads set';
        $memd->disconnect_all;
    }

    done_testing;
    exit 0;
}

# The data thread $i compresses in round $n: different per thread and
# round, 0 to ~4 kB, text and binary.
sub codec_data {
    my ($i, $n) = @_;
    return '' if $n % 97 == 0;
    my $len = ($n * 37 + $i * 101) % 4000;
    my $s = $n % 5 == 0
        ? join('', map { chr(($_ * 31 + $n + $i) % 256) } 1 .. $len)
        : join(' ', map { "w" . (($_ * 7 + $n + $i * 3) % 50) } 1 .. $len / 4);
    return substr $s, 0, $len;
}

sub codec_thread {
    my ($i, $level, $gate) = @_;
    sysread $gate, my $go, 1;
    local $Cache::Memcached::RustXS::Zlib::Level = $level;
    my (@bad, $n);
    for ($n = 1; $n <= 2000; $n++) {
        my $data = codec_data($i, $n);
        my $gz   = Cache::Memcached::RustXS::Zlib::memGzip($data);
        my $back = Cache::Memcached::RustXS::Zlib::memGunzip($gz);
        my $copy = $gz;    # Compress::Zlib::memGunzip empties its argument
        my $cz   = Compress::Zlib::memGunzip($copy);
        push @bad, "gzip $n" unless defined $back && $back eq $data
            && defined $cz && $cz eq $data;
        my $z    = Cache::Memcached::RustXS::Zlib::compress($data, $n % 10);
        my $un   = Cache::Memcached::RustXS::Zlib::uncompress($z);
        my $czu  = Compress::Zlib::uncompress($z);
        push @bad, "zlib $n" unless defined $un && $un eq $data
            && defined $czu && $czu eq $data;
        last if @bad > 5;
    }
    my $size = length Cache::Memcached::RustXS::Zlib::memGzip(
        join ' ', map { "w" . ($_ * $_ % 977) } 1 .. 5000);
    return ($n - 1, "@bad", $size, $Cache::Memcached::RustXS::Zlib::Level);
}

sub expected_value {
    my ($i, $k) = @_;
    return $k % 3 == 0 ? { thread => $i, key => $k, list => [ 1 .. $k ] }   # Storable
         : $k % 3 == 1 ? join(',', ("t$i-k$k") x 400)                        # compressed
         :               "thread $i key $k \0\r\nEND\r\n";                   # raw
}

sub memcached_thread {
    my ($i, $addr) = @_;
    # Half the threads gzip their sets through our memGzip, half through
    # Compress::Zlib's: every thread reads both.
    Cache::Memcached::RustXS::Zlib::override_compress_zlib() if $i % 2;
    my $memd = Cache::Memcached->new({
        servers => [$addr], namespace => "t$i:", compress_threshold => 1000,
        select_timeout => 5, parser_class => $CLASS,
    });
    my %want = map { ("k$_" => expected_value($i, $_)) } 0 .. 29;
    my @bad;
    for my $k (sort keys %want) {
        push @bad, "set $k" unless $memd->set($k, $want{$k});
    }
    my $ok = 0;
    for my $round (1 .. 10) {
        my $got = $memd->get_multi(keys %want, 'missing');
        my @wrong = grep {
            my $g = $got->{$_};
            !defined $g ? 1
              : ref $want{$_} ? !(ref $g eq 'HASH' && $g->{thread} == $i
                                  && "@{ $g->{list} }" eq "@{ $want{$_}{list} }")
              : $g ne $want{$_};
        } keys %want;
        push @wrong, 'missing' if exists $got->{missing};
        push @wrong, 'extra' if keys %$got != keys %want;
        if (@wrong) { push @bad, "round $round: @wrong[0 .. ($#wrong < 3 ? $#wrong : 3)]" }
        else        { $ok++ }
    }
    $memd->disconnect_all;
    return ($ok, "@bad");
}

sub rss_kb {
    open my $fh, '<', '/proc/self/status' or return undef;
    while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)\s+kB/ }
    return undef;
}
