#!/usr/bin/perl
# Every example in README.md and the POD that makes a Cache::Memcached::Fast
# object with our compress_methods (or fast_options) compresses as written:
# each is run, against a real memcached started for the test, with only the
# server address and the dictionary set folder (/etc/app/dictionaries)
# replaced, in a scratch directory holding users.dict and user.dict (a zstd
# dictionary trained on user records); a value of the corpus's median size
# stored through each Fast object it made is read back raw, and must be
# stored compressed (flag 2), smaller than the value, in the module's format
# (gzip or zstd, naming a dictionary when the example gives one). The
# examples are counted per file, so that one the extraction misses, or a
# new one, fails here until it is counted. Fast never compresses without
# compress_threshold (its default is -1): that is what this catches.
# README.md's other examples run as written too; its first run prints what
# the README says it prints; and its dictionary set, trained on one host as
# it says (--stage 0), is written with at once.
use strict;
use warnings;
use lib 't/lib';
use File::Copy ();
use File::Find ();
use File::Spec ();
use Data::Dumper ();
use Test::More;
use CMRXTest::Clients qw(fast_missing);
use CMRXTest::Memcached;
use CMRXTest::Peers qw(slurp);
use CMRXTest::Synopsis qw(missing_client run_in_scratch users_dict_scratch);

# The Fast objects the examples of each file make: [with our methods, without].
my %EXPECTED = (
    'README.md'                               => [4, 0],
    'lib/Cache/Memcached/RustXS.pm'      => [1, 0],
    'lib/Cache/Memcached/RustXS/Zlib.pm' => [3, 0],
    'lib/Cache/Memcached/RustXS/Zstd.pm' => [5, 0],
    'lib/cmrx-dict.pod'                  => [1, 0],
    'lib/Cache/Memcached/RustXS/Operations.pod' => [1, 0],
);

# The folder the examples name for a dictionary set.
my $SET_FOLDER = '/etc/app/dictionaries';

# A value of the corpus's median size (bench/data/values: 1.0 KB), JSON
# records of the kind users.dict was trained on.
my $VALUE = '[' . join(',', map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 18) . ']';

my $FAST_NEW = qr/Cache::Memcached::Fast->new/;
my $F_COMPRESS = 2;
my %MAGIC = (Zlib => "\x1f\x8b", Zstd => "\x28\xb5\x2f\xfd");

# The code examples of README.md: its ```perl blocks, and the programs its
# ```sh blocks give perl as a here-document (perl <<'EOF' ... EOF).
sub readme_examples {
    my ($text) = @_;
    my @code = $text =~ /^```perl\n(.*?)^```/msg;
    push @code, map { /^perl <<'EOF'\n(.*?)^EOF\n/msg } $text =~ /^```sh\n(.*?)^```/msg;
    return @code;
}

# What README.md says a here-document program prints: the ```text block
# after "It prints" that follows its ```sh block, by the program's code.
sub readme_printed {
    my ($text) = @_;
    return $text =~ /^perl <<'EOF'\n(.*?)^EOF\n```\n\nIt prints\n\n```text\n(.*?)^```/msg;
}

# The code examples of a POD: the whole SYNOPSIS (its verbatim paragraphs
# are one program), and elsewhere each run of verbatim paragraphs that no
# other paragraph interrupts; unindented.
sub pod_examples {
    my ($text) = @_;
    my (@examples, @run);
    my ($in_pod, $section) = (0, '');
    my $flush = sub {
        push @examples, _unindent(join "\n\n", @run) if @run;
        @run = ();
    };
    for my $paragraph (split /\n(?:[ \t]*\n)+/, $text) {
        if ($paragraph =~ /\A=(\w+)(?:[ \t]+(.*))?/) {
            my ($command, $title) = ($1, $2);
            if ($command eq 'cut') { $flush->(); $in_pod = 0; next }
            $in_pod = 1;
            next if $command eq 'pod' || $command eq 'encoding';
            $flush->() if $command eq 'head1' || $section ne 'SYNOPSIS';
            $section = $title if $command eq 'head1';
            next;
        }
        next unless $in_pod;
        if ($paragraph =~ /\A[ \t]/) {
            push @run, $paragraph;
        }
        elsif ($section ne 'SYNOPSIS') {
            $flush->();
        }
    }
    $flush->();
    return @examples;
}

sub _unindent {
    my ($code) = @_;
    my ($indent) = sort { length $a <=> length $b } $code =~ /^([ \t]*)\S/mg;
    $code =~ s/^\Q$indent\E//mg if defined $indent;
    return $code;
}

# The Fast objects an example makes: { var, module (Zlib, Zstd or undef:
# not ours), dictionary (a dictionary or a set given) }, and how many
# Fast->new it holds that are not "$var = Cache::Memcached::Fast->new({...});".
sub fast_objects {
    my ($code) = @_;
    my @objects;
    while ($code =~ /(\$\w+)\s*=\s*Cache::Memcached::Fast->new\(\s*\{(.*?)\}\s*\)\s*;/sg) {
        my ($var, $args) = ($1, $2);
        my ($module) = $args =~ /\bCache::Memcached::RustXS::(Zlib|Zstd)::(?:fast_options|compress_methods)\s*\(/;
        push @objects, { var => $var, module => $module, dictionary => $args =~ /\bdictionar(?:y|ies)\s*=>/ ? 1 : 0 };
    }
    my $made = () = $code =~ /$FAST_NEW/g;
    return (\@objects, $made - @objects);
}

# The files to look in: README.md and every .pm and .pod under lib.
my @files = ('README.md');
File::Find::find({ no_chdir => 1, wanted => sub { push @files, $_ if /\.(?:pm|pod)\z/ } }, 'lib');
@files = sort @files;

# ---- extraction: needs neither memcached nor a client -----------------------

my @examples;    # { file, code, objects }
my ($ours_total, %found);
for my $file (@files) {
    my $text = slurp($file);
    my @code = $file eq 'README.md' ? readme_examples($text) : pod_examples($text);
    my ($ours, $others, $unfollowed, $in_examples) = (0, 0, 0, 0);
    for my $code (@code) {
        my ($objects, $unknown) = fast_objects($code);
        $unfollowed += $unknown;
        $in_examples += @$objects + $unknown;
        my @ours = grep { $_->{module} } @$objects;
        $ours += @ours;
        $others += @$objects - @ours;
        push @examples, { file => $file, code => $code, objects => \@ours } if @ours;
    }
    my $anywhere = () = $text =~ /$FAST_NEW/g;
    next unless $anywhere || $EXPECTED{$file};
    $found{$file} = 1;
    is $in_examples, $anywhere, "$file: each of its $anywhere Cache::Memcached::Fast->new is in a code example";
    is $unfollowed, 0, "$file: each Fast object of its examples is made as \"\$var = Cache::Memcached::Fast->new({...});\"";
    is_deeply [$ours, $others], $EXPECTED{$file} || [0, 0],
        "$file: $ours Fast objects with our methods and $others without, as counted here";
    $ours_total += $ours;
}
ok !(grep { !$found{$_} } sort keys %EXPECTED), 'every file counted here was found'
    or diag 'not found: ' . join ' ', grep { !$found{$_} } sort keys %EXPECTED;
is $ours_total, 15, "$ours_total Fast objects with our methods in the examples";

# ---- fast_options: what it gives, what it refuses ------------------------------

require Cache::Memcached::RustXS::Zlib;
require Cache::Memcached::RustXS::Zstd;
my %DEFAULT = (Zlib => 224, Zstd => 208);    # their POD and bench/threshold.pl say why
for my $module (sort keys %DEFAULT) {
    my $fast_options = \&{"Cache::Memcached::RustXS::${module}::fast_options"};
    my @options = $fast_options->();
    is scalar(@options), 4, "$module: fast_options gives two options";
    my %options = @options;
    is $options{compress_threshold}, $DEFAULT{$module}, "$module: compress_threshold $DEFAULT{$module} by default";
    is ref $options{compress_methods}, 'ARRAY', "$module: and compress_methods";
    my @given = $fast_options->(compress_threshold => 1000, compress_ratio => 0.9, max_output => 1 << 20);
    is_deeply [ @given[0 .. 3] ], [ compress_threshold => 1000, compress_ratio => 0.9 ],
        "$module: compress_threshold and compress_ratio as given, the ratio only when given";
    for my $bad ([compress_threshold => 0], [compress_threshold => -1], [compress_threshold => '1e3'],
                 [compress_threshold => 2**31], [compress_threshold => undef], [compress_ratio => 0],
                 [compress_ratio => 1.5], [compress_ratio => 'most'], [compress_ratio => undef], [threshold => 100]) {
        my $line = __LINE__ + 1;
        ok !eval { $fast_options->(@$bad); 1 }, "$module: fast_options refuses $bad->[0] => " . (defined $bad->[1] ? $bad->[1] : 'undef');
        like $@, qr/\Afast_options: .* at \Q$0\E line $line\.?$/, '... saying so, at the line that called it';
    }
}

# ---- each example, run as written ---------------------------------------------

if (my $why = fast_missing()) {
  SKIP: { skip "the examples need Cache::Memcached::Fast: $why", 1 }
    done_testing;
    exit 0;
}
my $server = CMRXTest::Memcached->start_or_skip_rest;
my $addr = $server->address;

# The scratch directory: users.dict (Zstd's SYNOPSIS), user.dict (README's,
# made there by cmrx-dict train --prefix user: the same kind of values),
# and a dictionary set with a dictionary for 'user:' and a whole-cache entry.
my ($scratch, $out) = users_dict_scratch();
ok -s File::Spec->catfile("$scratch", 'users.dict'), 'users.dict trained in the scratch directory' or diag $out;
File::Copy::copy(map { File::Spec->catfile("$scratch", $_) } 'users.dict', 'user.dict') or die "copy: $!";
my $set_dir = File::Spec->catdir("$scratch", 'dictionaries');
$out = run_in_scratch($scratch, q{
    use Cache::Memcached::RustXS::Zstd::DictionarySet;
    my $dict = do { local (@ARGV, $/) = ('users.dict'); <> };
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create('dictionaries');
    $set->add(prefix => 'user:', dictionary => $dict, level => 3, id => 1);
    $set->add(prefix => '', dictionary => $dict, level => 3, id => 2);
    $set->write;
});
is $?, 0, 'a dictionary set made in the scratch directory' or diag $out;
my %with = Cache::Memcached::RustXS::Zstd::fast_options(dictionary => File::Spec->catfile("$scratch", 'users.dict'));
is $with{compress_threshold}, 64, 'Zstd: compress_threshold 64 by default with a dictionary';
%with = Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => $set_dir);
is $with{compress_threshold}, 64, '... and with a dictionary set';

my %printed = readme_printed(slurp('README.md'));
ok keys %printed >= 1, 'README.md says what its first run prints';
my $n = 0;
for my $example (@examples) {
    my $code = $example->{code};
    my $where = "$example->{file}, example " . ++$n . ' (' . join(', ', map { $_->{var} } @{ $example->{objects} }) . ')';
    my $addresses = $code =~ s/(['"])[\w.-]+:11211\1/'$addr'/g;
    $code =~ s/(['"])\Q$SET_FOLDER\E\1/'$set_dir'/g;
    my $checks = join '', map { _check_code($_, $addr) } @{ $example->{objects} };
    # A set an example makes in a folder of its own is removed after it.
    my $cleanup = join '', map { "File::Path::rmtree($_->dir);\n" }
        $code =~ /(\$\w+)\s*=\s*Cache::Memcached::RustXS::Zstd::DictionarySet->create\(/g;
  SKIP: {
        my $missing = missing_client($code);
        skip "$where: needs what is missing here: $missing",
            2 + 2 * @{ $example->{objects} } + (defined $printed{ $example->{code} } ? 1 : 0) if $missing;
        my $run = "$code\n;\nuse CMRXTest::Raw qw(raw_get);\nuse Cache::Memcached::RustXS::Zstd ();\n"
                . "require File::Path;\n$checks$cleanup";
        my $out = run_in_scratch($scratch, $run);
        is $?, 0, "$where: runs as written ($addresses server address(es) set to the test's)"
            or diag $out;
        for my $object (@{ $example->{objects} }) {
            my $var = $object->{var};
            my ($flags, $bytes, $head, $dictionary) = $out =~ /^STORED \Q$var\E flags=(\d+) bytes=(\d+) head=(\w*) dictionary=(\S+)$/m;
            ok defined $flags && $flags & $F_COMPRESS && $bytes < length $VALUE,
                "$where: $var stores a value of " . length($VALUE) . ' bytes compressed and smaller'
                . (defined $flags ? " (flags $flags, $bytes bytes)" : '')
                or diag $out;
            my $magic = unpack 'H*', $MAGIC{ $object->{module} };
            ok defined $head && $head eq $magic && (!$object->{dictionary} || $dictionary > 0),
                "$where: $var writes $object->{module}'s format" . ($object->{dictionary} ? ' with a dictionary' : '')
                . (defined $head ? " (starts $head, dictionary ID $dictionary)" : '');
        }
        unlike $out, qr/warn|uninitialized|deprecated/i, "$where: without warnings";
        if (defined(my $said = $printed{ $example->{code} })) {
            is substr($out, 0, length $said), $said, "$where: prints what README.md says it prints"
                or diag $out;
        }
    }
}

# README's examples without a Fast object run as written too, and a
# variable whose line ends with a comment giving its value ("# { k => 'v' }")
# holds that value.
my $plain = 0;
for my $code (readme_examples(slurp('README.md'))) {
    my ($objects, $unknown) = fast_objects($code);
    next if @$objects || $unknown;
    my $where = 'README.md, example without Fast ' . ++$plain;
    my %said = map { my ($var, $value) = @$_; ($var => $value) }
               map { [ /^\s*my (\$\w+)\s*=.*;\s*#\s*(\{.*\})\s*$/ ] } grep { /;\s*#\s*\{/ } split /\n/, $code;
  SKIP: {
        my $missing = missing_client($code);
        skip "$where: needs what is missing here: $missing", 2 + keys %said if $missing;
        (my $run = $code) =~ s/(['"])[\w.-]+:11211\1/'$addr'/g;
        # Data::Dumper's settings as methods: its package variables, named
        # once in this code, would be a fatal "used only once" where no
        # module loaded before names them too.
        $run .= "\n;\nrequire Data::Dumper;\n"
              . join '', map { "print 'SAID $_ ', Data::Dumper->new([$_])->Sortkeys(1)->Indent(0)->Dump, \"\\n\";\n" }
                             sort keys %said;
        my $out = run_in_scratch($scratch, $run);
        is $?, 0, "$where: runs as written" or diag $out;
        unlike $out, qr/warn|uninitialized|deprecated/i, "$where: without warnings";
        for my $var (sort keys %said) {
            my $expected = Data::Dumper->new([ eval $said{$var} ])->Sortkeys(1)->Indent(0)->Dump;
            my ($got) = $out =~ /^SAID \Q$var\E (.*)$/m;
            is $got, $expected, "$where: $var is $said{$var}, as its comment says";
        }
    }
}
ok $plain >= 1, "README.md has $plain example(s) without a Fast object, each run";

# README's dictionary set followed as written on one host: its train --all
# line (--stage 0; the server and the folder replaced) on values of user:
# keys, then its set example with that folder: the Fast object for user:
# writes zstd with the set's dictionary for user: at once, without waiting
# for a rescan.
{
    my ($train) = slurp('README.md') =~ /^(cmrx-dict train --all --stage 0 [^#\n]*?)\s*(?:#.*)?$/m;
    ok defined $train, "README.md's dictionary-set example trains with --stage 0";
    my ($example) = grep { $_->{file} eq 'README.md' && $_->{code} =~ /load_dictionaries\(/ } @examples;
    ok $example, "README.md has its dictionary-set example";
  SKIP: {
        skip 'no README example to follow', 3 unless defined $train && $example;
        skip 'Cache::Memcached is not installed (the README\'s set example uses it)', 3
            unless eval { require Cache::Memcached; 1 };
        require Cache::Memcached::Fast;
        require Cache::Memcached::RustXS::Zlib;
        my $fill = Cache::Memcached::Fast->new({ servers => [$addr], Cache::Memcached::RustXS::Zlib::fast_options() });
        # Users with their recent events, 0.7 to 1.4 KB: values so small
        # that zstd's set-up dominates (a record of 200 bytes) decompress
        # at gzip's speed, and the tuner rightly gives them no dictionary.
        for my $n (1 .. 300) {
            my $events = join ',', map { '{"at":' . (1700000000 + $n * 100 + $_) . ',"page":"/item/' . ($n * $_ % 97)
                                           . '","ms":' . (($n + $_) % 300) . '}' } 1 .. 8 + $n % 8;
            my $record = qq({"id":$n,"name":"user$n","plan":") . ($n % 3 ? 'free' : 'paid') . qq(","visits":)
                       . $n * 7 . qq(,"events":[$events]});
            $fill->set("user:$n", $record) or die "cannot fill the test's memcached\n";
        }
        my $dir = File::Spec->catdir("$scratch", 'readme-set');
        (my $command = $train) =~ s/\A cmrx-dict \s+//x;
        $command =~ s/\s--server\s+\S+/ --server $addr/;
        $command =~ s/\s--out-dir\s+\S+/ --out-dir $dir/;
        my $out = `"$^X" -Mblib bin/cmrx-dict $command 2>&1`;
        is $?, 0, "README's train --all line runs (server and folder replaced)" or diag $out;
        require Cache::Memcached::RustXS::Zstd::DictionarySet;
        my $set = eval { Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir) };
        my $user = $set && $set->current('user:');
        my $code = $example->{code};
        $code =~ s/(['"])[\w.-]+:11211\1/'$addr'/g;
        $code =~ s/(['"])\Q$SET_FOLDER\E\1/'$dir'/g;
        my ($users) = grep { $_->{var} eq '$users' } @{ $example->{objects} };
        $out = run_in_scratch($scratch, "$code\n;\nuse CMRXTest::Raw qw(raw_get);\n" . _check_code($users, $addr));
        my ($dictionary) = $out =~ /^STORED \$users flags=\d+ bytes=\d+ head=28b52ffd dictionary=(\d+)$/m;
        ok $user && defined $dictionary && $dictionary == $user->{id},
            "... and the set example then writes user: keys with its dictionary for user: at once"
            . ($user ? " (ID $user->{id})" : ' (the set has none for user:)') or diag $out;
    }
}

# Perl code that stores $VALUE through the Fast object $object->{var},
# reads it back through it, and prints what the server holds.
sub _check_code {
    my ($object, $addr) = @_;
    my $var = $object->{var};
    my $key = 'fast-example';
    return <<"CHECK";
{
    my \$value = '$VALUE';
    $var->set('$key', \$value) or die "$var: set failed\\n";
    my \$got = $var->get('$key');
    defined \$got && \$got eq \$value or die "$var: get did not give the value back\\n";
    my (\$flags, \$stored) = raw_get('$addr', $var->namespace . '$key');
    defined \$flags or die "$var: the server holds nothing for the key\\n";
    my \$dictionary = Cache::Memcached::RustXS::Zstd::frame_dictionary_id(\$stored);
    printf "STORED %s flags=%d bytes=%d head=%s dictionary=%s\\n", '$var', \$flags, length \$stored,
        unpack('H4', \$stored) eq '1f8b' ? '1f8b' : unpack('H8', \$stored), defined \$dictionary ? \$dictionary : -1;
}
CHECK
}

done_testing;
