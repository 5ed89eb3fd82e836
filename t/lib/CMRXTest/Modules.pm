package CMRXTest::Modules;

# Test helper: the distribution's modules, as MANIFEST lists them. See the
# POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use ExtUtils::Manifest ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(modules module_file);

my $LIB = 'lib';

# The module names, sorted: every .pm file under lib that MANIFEST
# lists (Makefile.PL reads the same lines).
sub modules {
    my $manifest = ExtUtils::Manifest::maniread();
    return sort map { _module_of($_) } grep { m{\A\Q$LIB\E/.+\.pm\z} } keys %$manifest;
}

# The file of a module name, relative to the distribution's root.
sub module_file {
    my ($module) = @_;
    return "$LIB/" . join('/', split /::/, $module) . '.pm';
}

sub _module_of {
    my ($file) = @_;
    (my $name = substr $file, length("$LIB/")) =~ s/\.pm\z//;
    return join '::', split m{/}, $name;
}

1;

__END__

=head1 NAME

CMRXTest::Modules - the modules of the distribution, from MANIFEST

=head1 SYNOPSIS

    use CMRXTest::Modules qw(modules module_file);
    for my $module (modules()) {       # Cache::Memcached::RustXS, ...
        my $file = module_file($module);   # lib/Cache/Memcached/RustXS.pm
        ...
    }

=head1 DESCRIPTION

The one list of the distribution's modules is MANIFEST: every file under
F<lib> ending in C<.pm> that it lists is a module, which Makefile.PL
installs (with its man page and its C<provides> entry) and whose POD
F<xt/pod.t> checks and whose SYNOPSIS F<t/04-synopsis-dict.t> or
F<t/05-synopsis.t> runs (L<CMRXTest::Synopsis>).
F<t/06-module-lists.t> checks that MANIFEST, the files and every list of
modules written in prose (the main module's POD, the XS, CONTRIBUTING.md) agree.
Run from the distribution's root, where MANIFEST is.

=over 4

=item C<modules>

The module names, sorted.

=item C<module_file($module)>

The file of a module, relative to the root.

=back

=cut
