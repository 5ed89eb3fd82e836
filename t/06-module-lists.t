#!/usr/bin/perl
# The list of modules is MANIFEST's (CMRXTest::Modules): the files under
# lib, what the build installs, and every list of modules written out
# in prose (the main module's POD, the XS's header comment, the layout in
# CONTRIBUTING.md) agree with it, so a module added in one place and not the others
# fails here. (t/05 runs every module's SYNOPSIS and xt/pod.t checks every
# module's POD, each from the same list.)
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use ExtUtils::Manifest ();
use File::Find ();
use CMRXTest::Modules qw(modules module_file);
use CMRXTest::Peers qw(slurp);

# The names a file lists as Cache::Memcached::RustXS and ::Name
# abbreviations, as CONTRIBUTING.md does ("Cache::Memcached::RustXS, ::Zlib").
sub expand {
    my ($text) = @_;
    return map { /\A::/ ? "Cache::Memcached::RustXS$_" : $_ }
        $text =~ /(Cache::Memcached::RustXS(?:::\w+)*|(?<![\w:])::\w+(?:::\w+)*)/g;
}

my @modules = modules();
ok @modules >= 5, 'MANIFEST lists ' . scalar(@modules) . ' modules: ' . join ', ', @modules;

# ---- the files ---------------------------------------------------------------

my @on_disk;
File::Find::find({ no_chdir => 1, wanted => sub { push @on_disk, $File::Find::name if /\.pm\z/ } },
                 'lib');
is_deeply [ sort @on_disk ], [ sort map { module_file($_) } @modules ],
    'the .pm files under lib are the ones MANIFEST lists';

for my $module (@modules) {
    my $code = slurp(module_file($module));
    my @packages = $code =~ /^package\s+([\w:]+)\s*;/mg;
    is $packages[0], $module, "$module: its file's first package is its name";
    like $code, qr/^=head1 NAME\n\n\Q$module\E - /m, "$module: its NAME is its name";
}

# ---- what the build installs ---------------------------------------------------

SKIP: {
    skip 'no blib: run make first', 2 unless -d 'blib/lib';
    my @built;
    File::Find::find({ no_chdir => 1, wanted => sub { push @built, $File::Find::name if /\.pm\z/ } },
                     'blib/lib');
    is_deeply [ sort @built ], [ sort map { my $f = module_file($_); $f =~ s{\Alib}{blib/lib}; $f } @modules ],
        'the build installs exactly these modules (Makefile.PL reads MANIFEST)';
    opendir my $dh, 'blib/man3' or die "blib/man3: $!";
    my @man = sort map { /\A(.+)\.[^.]+\z/ ? $1 : () } grep { /\A[^.]/ } readdir $dh;
    # The guides (.pod files under lib, but cmrx-dict's manual, a man1 page).
    my @guides = map { m{\Alib/(.+)\.pod\z} && $1 ne 'cmrx-dict' ? join('::', split m{/}, $1) : () }
                 sort keys %{ ExtUtils::Manifest::maniread() };
    ok scalar(grep { $_ eq 'Cache::Memcached::RustXS::Operations' } @guides), 'the operations guide is one';
    is_deeply \@man, [ sort @modules, @guides ], '... and a man page for each module and guide, named after it';
}

# ---- lists in prose -------------------------------------------------------------

{
    my $pod = slurp(module_file('Cache::Memcached::RustXS'));
    my ($description) = $pod =~ /^=head1 DESCRIPTION\n(.*?)^=head1 /ms;
    my @listed = $description =~ /^=item L<([\w:]+)>/mg;
    is_deeply [ sort @listed ], [ grep { $_ ne 'Cache::Memcached::RustXS' } @modules ],
        "Cache::Memcached::RustXS's DESCRIPTION has an =item for each other module";
}

{
    my $xs = slurp('perl/RustXS.xs');
    my ($header) = $xs =~ m{\A/\*(.*?)\*/}s;
    my @listed = $header =~ /^\s*\*\s+(Cache::Memcached::RustXS(?:::\w+)*)\s/mg;
    my %with_xsubs = map { ($_ => 1) } $xs =~ /^MODULE\s*=\s*\S+\s+PACKAGE\s*=\s*(\S+)/mg;
    is_deeply [ sort @listed ], [ sort keys %with_xsubs ],
        "perl/RustXS.xs's header comment lists the packages its MODULE lines define";
    my @unknown = grep { my $p = $_; !grep { $_ eq $p } @modules } sort keys %with_xsubs;
    is_deeply \@unknown, [], '... each of them a module of the distribution';
}

{
    my $contributing = slurp('CONTRIBUTING.md');
    my ($layout) = $contributing =~ /^lib\/\s+(.*?)\n(?=\S)/ms;
    ok defined $layout, "CONTRIBUTING.md's layout has a lib/ entry" or $layout = '';
    is_deeply [ sort(expand($layout)) ], \@modules, '... naming every module';
}

done_testing;
